// Every index's id, name and type: index files on disk are named by id (bench/capacity.py
// measures each index's bytes).
SHOW INDEXES YIELD id, name, type
RETURN id, name, type
