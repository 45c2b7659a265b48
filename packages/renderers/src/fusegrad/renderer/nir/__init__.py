"""fusegrad's NIR renderer (Mesa's shader IR, built through tinymesa) and the LVP compiler
that runs its shaders on the CPU through llvmpipe.

* ``NIRRenderer`` — linear programs as NIR compute shaders (``render`` gives the printed
  shader plus its serialized form);
* ``LVPCompiler`` — rendered NIR -> llvmpipe's LLVM IR -> an ELF object for the CPU device;
* ``load_mesa``, ``MesaUnavailable``, ``mesa_unavailable()`` — the libraries, or why they
  can't be loaded.

Needs ``pip install 'fusegrad-renderers[nir]'`` (tinymesa and the LLVM 20 it links against).
"""

from fusegrad.renderer.nir.lvp import LVPCompiler
from fusegrad.renderer.nir.mesa import MesaUnavailable, load_mesa, mesa_unavailable
from fusegrad.renderer.nir.renderer import NIRRenderer

__all__ = ["LVPCompiler", "MesaUnavailable", "NIRRenderer", "load_mesa", "mesa_unavailable"]
