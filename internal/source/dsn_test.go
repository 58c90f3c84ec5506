package source

import "testing"

func TestIsDSN(t *testing.T) {
	for s, want := range map[string]bool{
		"shopdb":                               false,
		"shop-db_2":                            false,
		"postgres://repl:secret@db:5432/shop":  true,
		"postgresql://db/shop":                 true,
		"host=db user=repl password=secret":    true,
		"mysql://repl:secret@db:3306/shop":     true,
		"mariadb://db/shop":                    true,
		"repl:secret@tcp(db:3306)/shop":        true,
		"root@unix(/run/mysqld/mysqld.sock)/x": true,
	} {
		if got := IsDSN(s); got != want {
			t.Errorf("IsDSN(%q) = %v, want %v", s, got, want)
		}
	}
}
