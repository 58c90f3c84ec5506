package main

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// removeEmptyLocalDirs removes the directories under a table location on
// the local file system (file:///… or a plain absolute path) that hold no
// files, deepest first, and the location's directory itself when it ends
// up empty: what is left of a dropped table after its files were purged
// (its data/ and metadata/ directories). A directory that still holds a
// file, at any depth, stays, with the file. Locations in object stores
// (s3://, gs://, abfss://, …) have no directories: nothing to do. It
// returns the directories removed. Errors: reading or removing a
// directory failed (a location that does not exist is no error).
func removeEmptyLocalDirs(location string) ([]string, error) {
	root, ok := localPath(location)
	if !ok {
		return nil, nil
	}
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slices.Reverse(dirs) // children before their parents
	var removed []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return removed, err
		}
		if len(entries) > 0 {
			continue
		}
		if err := os.Remove(dir); err != nil {
			return removed, err
		}
		removed = append(removed, dir)
	}
	return removed, nil
}

// localPath returns the local file-system path of a file:// URL or an
// absolute path.
func localPath(location string) (string, bool) {
	if strings.HasPrefix(location, "file:") {
		u, err := url.Parse(location)
		if err != nil || u.Path == "" {
			return "", false
		}
		return filepath.FromSlash(u.Path), true
	}
	if filepath.IsAbs(location) {
		return location, true
	}
	return "", false
}
