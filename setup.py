"""Package discovery under the two roots `pyproject.toml` maps (``core`` is ``toolpair``,
``integrations`` is ``toolpair.integrations``): every package found there is built, so
a new subpackage is never left out of the wheel. Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup


def _under(root: str, name: str) -> list[str]:
    # Namespace-aware, so that a data folder (``demo``) is a package the wheel declares.
    found = find_namespace_packages(root, exclude=["*__pycache__*", "integrations*"])
    return [name, *(f"{name}.{p}" for p in found)]


packages = _under("core", "toolpair")
packages += [p for p in _under("integrations", "toolpair.integrations") if p not in packages]
setup(packages=packages)
