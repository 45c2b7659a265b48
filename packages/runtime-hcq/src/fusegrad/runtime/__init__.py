"""fusegrad.runtime: see the package README for its public names."""
