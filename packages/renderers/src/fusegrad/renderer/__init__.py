"""fusegrad.renderer: see the package README for its public names."""
