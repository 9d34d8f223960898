// Register (or replace) a JSON schema for structured records.
MERGE (s:RecordSchema {tenant: $tenant, name: $name})
SET s.schema = $schema, s.updatedAt = $now
RETURN s.name AS name
