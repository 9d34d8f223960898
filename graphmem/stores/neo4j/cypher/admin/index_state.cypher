// State and options of the named indexes, so migrate can verify what it created.
SHOW INDEXES YIELD name, type, state, options
WHERE name IN $names
RETURN name, type, state, options
