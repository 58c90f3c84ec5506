package main

import "strings"

// splitKey splits a comma-separated column list, dropping blanks.
func splitKey(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}
