// The tenant's resolution overrides: configured aliases and split-off surface forms.
MATCH (a:EntityAlias {tenant: $tenant})
RETURN a.alias AS alias, a.canonical AS canonical, a.kind AS kind
