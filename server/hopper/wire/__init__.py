"""Everything that knows an AWS spelling: protocols, shapes, codes, digests."""
