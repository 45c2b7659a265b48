"""fusegrad.uop: the IR every fusegrad layer speaks."""
