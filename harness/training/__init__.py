"""Training of decoders: the core trainer shared by all decoder families."""
