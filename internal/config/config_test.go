package config

import (
	"flag"
	"maps"
	"strings"
	"testing"
)

// Issue 34 item 6: a malformed CATALOG_PROPS or LAKEMIRROR_SOURCES entry
// printed itself ("s3.secret-access-key:S3CRET-XYZ" is not k=v), and a
// comma inside a password printed the password's tail. The errors name
// the setting and the entry's number or the key before it, never a value.
func TestPropsErrorsHideValues(t *testing.T) {
	for _, c := range []struct {
		flag, value, want string
	}{
		{"-catalog-props", "s3.secret-access-key:S3CRET-XYZ",
			`config: --catalog-props (env CATALOG_PROPS): entry 1 is not k=v: it has no "=" (entries are not shown: they may hold secrets)`},
		{"-catalog-props", "s3.region=eu-west-1, s3.secret-access-key=S3CRET,XYZ",
			`config: --catalog-props (env CATALOG_PROPS): entry 3, after "s3.secret-access-key", has no "=": a value cannot contain a comma (entries are not shown: they may hold secrets)`},
		{"-catalog-props", "s3.region=eu-west-1,=S3CRET-XYZ",
			`config: --catalog-props (env CATALOG_PROPS): entry 2 has no key before its "="`},
		{"-catalog-props", "s3.secret-access-key=S3CRET-XYZ,s3.secret-access-key=S3CRET-XYZ",
			`config: --catalog-props (env CATALOG_PROPS): key "s3.secret-access-key" is given twice (entry 2)`},
		{"-sources", "shop=postgres://u:S3CRET,XYZ@db:5432/shop",
			`config: --sources (env LAKEMIRROR_SOURCES): entry 2, after "shop", has no "=": a value cannot contain a comma (entries are not shown: they may hold secrets)`},
		{"-sources", "postgres://u:S3CRET-XYZ@db:5432/shop",
			`config: --sources (env LAKEMIRROR_SOURCES): entry 1 is not k=v: it has no "=" (entries are not shown: they may hold secrets)`},
	} {
		var s Settings
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		b := s.Bind(fs)
		if err := fs.Parse([]string{c.flag, c.value}); err != nil {
			t.Fatal(err)
		}
		err := b.Finish()
		if err == nil || err.Error() != c.want {
			t.Errorf("%s %q:\n got %v\nwant %s", c.flag, c.value, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "S3CRET") || strings.Contains(err.Error(), "XYZ")) {
			t.Errorf("%s %q: the error shows the secret: %v", c.flag, c.value, err)
		}
	}

	var s Settings
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	b := s.Bind(fs)
	if err := fs.Parse([]string{"-catalog-props", " s3.region = eu-west-1 ,s3.secret-access-key=a=b", "-sources", "shop=postgres://u:p@db/shop"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"s3.region": "eu-west-1", "s3.secret-access-key": "a=b"}; !maps.Equal(s.Catalog.Props, want) {
		t.Errorf("props %v, want %v", s.Catalog.Props, want)
	}
	if want := map[string]string{"shop": "postgres://u:p@db/shop"}; !maps.Equal(s.Sources, want) {
		t.Errorf("sources %v, want %v", s.Sources, want)
	}
}
