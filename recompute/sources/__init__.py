"""Where untrusted chain data comes from (docs/design.md §Sources): a JSON-RPC node, a recorded
vector, a capture of a live run, the watch cache, the fixture node. Nothing here is trusted:
the core checks every answer."""
