"""An adversary's suite: hostile agent outputs, tool outputs and questions through the real graph; what must never leak."""
