"""``__version__`` of the fusegrad-renderers distribution, checked against its requirements on import.

Importing this module raises ``ImportError`` when the installed fusegrad distributions
fusegrad-renderers requires are outside the ranges it declares (see ``fusegrad.uop.version``).
"""

from fusegrad.uop.version import check_requirements

__version__ = check_requirements("fusegrad-renderers")
