"""Files in storage by prefix: local directories and object stores (:mod:`service.storage.objects`) alike.

* :func:`list_data_files`: the Parquet data files under a directory or prefix, by Spark's rules.
* :func:`expand_sources`: paths as given on a command line, directories and prefixes expanded.
* :func:`listing_prefix`: the prefix every listed file of a root starts with.

No PySpark and no catalog here: the CLI, the REST API and the Spark helpers all list through it.
"""

from service.storage.listing import expand_sources, is_hidden_name, list_data_files, listing_prefix

__all__ = ["expand_sources", "is_hidden_name", "list_data_files", "listing_prefix"]
