// A registered record schema.
MATCH (s:RecordSchema {tenant: $tenant, name: $name})
RETURN s.schema AS schema
