"""The GraphQL schema: one module per domain with its types, the context, errors, and the
checks on an operation's cost and arguments before it runs."""
