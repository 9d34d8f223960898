"""What each `graphmem` command does, one module per group of commands; ``ops/cli.py``
parses the command line and calls them."""
