"""The package version, recorded in every manifest, task card and episode info."""

from importlib.metadata import PackageNotFoundError, version

try:
    PACKAGE_VERSION = version("stillweb")
except PackageNotFoundError:  # running from a checkout that is not installed
    PACKAGE_VERSION = "0.0.0+unknown"
