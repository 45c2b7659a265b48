"""fusegrad.codegen: see the package README for its public names."""
