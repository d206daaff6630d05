"""Reading Parquet: bytes in, typed metadata out. Imports nothing of shredcat but :mod:`service.errors`.

* :mod:`.footer`: the footer reader (table-driven Thrift compact decoding, C accelerator);
* :mod:`.pages`: the float page scanner (NaN present? which zero first?);
* :mod:`.io`: the one pyarrow wrapper, and safe local opening (no symlinks out of a root, no FIFOs).
"""
