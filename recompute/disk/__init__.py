"""Files recompute writes, each written whole and only where meant (docs/design.md §Module map):
the one room below every other that touches the file system to write (level 0, beside
``core``, which does no I/O): :mod:`recompute.disk.whole_file`."""
