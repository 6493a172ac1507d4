#!/usr/bin/env python3
"""Writes the gzip bombs of the /track memory benchmark: bodies of a few KiB that inflate to 16 MiB of
JSON. Usage: track-bomb.py <dir>; writes <dir>/events.gz ({"events":[0,0,...]}: millions of events) and
<dir>/wide.gz ({"events":[[0,0,...]]}: one event of millions of values)."""
import gzip
import os
import sys

SIZE = 16 << 20


def bomb(path, opening, closing):
    items = (SIZE - len(opening) - len(closing)) // 2
    text = opening + b"0," * (items - 1) + b"0" + closing
    with open(path, "wb") as f:
        f.write(gzip.compress(text, compresslevel=9))


def main():
    out = sys.argv[1]
    bomb(os.path.join(out, "events.gz"), b'{"events":[', b"]}")
    bomb(os.path.join(out, "wide.gz"), b'{"events":[[', b"]]}")


if __name__ == "__main__":
    main()
