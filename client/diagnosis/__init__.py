"""Client library and generated contracts of the diagnosis-graph service."""
