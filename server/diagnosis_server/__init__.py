"""The diagnosis-graph server: graph, gatekeeper, verification, composition, store and gRPC API."""
