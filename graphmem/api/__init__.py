"""The API layer: GraphQL (and MCP) over HTTP, authentication, limits. Talks only to the service."""
