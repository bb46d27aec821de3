# PyInstaller runtime hook (installers/spar-desktop.spec): the bundle ships without gRPC (17 MB).
# chromadb imports its OpenTelemetry OTLP/gRPC trace exporter when it is imported, but constructs
# it only when an OTel collector endpoint is configured, which the app never does (telemetry is off
# everywhere). This stands in for that one module; constructing the exporter says why it cannot.
import sys
import types


def _install() -> None:
    name = "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"
    if name in sys.modules:
        return
    try:
        import grpc  # noqa: F401 - a bundle that has gRPC after all uses the real exporter
        return
    except ImportError:
        pass

    class OTLPSpanExporter:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("SPAR Desktop's bundle cannot export OpenTelemetry traces (no gRPC inside)")

    module = types.ModuleType(name)
    module.OTLPSpanExporter = OTLPSpanExporter
    sys.modules[name] = module


_install()
