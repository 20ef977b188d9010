"""Generated protobuf and gRPC code for package diagnosis.v1 (never edited by hand; see `make proto`)."""
