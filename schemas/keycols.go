package schemas

import "slices"

// KeyColumns returns the primary-key column names in use: the configured
// ones, or those learned from the first usable Kafka record key; nil
// before either is known.
func (d *Decoder) KeyColumns() []string { return slices.Clone(d.keyCols) }
