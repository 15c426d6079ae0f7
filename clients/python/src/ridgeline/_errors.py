"""RidgelineError: the one exception type of the client, carrying the gRPC
status code and the request field path the server blames."""

import re

import grpc

# The server's INVALID_ARGUMENT / NOT_FOUND messages start with the field
# path, "workload.batch: must be in [1, 65536]; got 0" or
# "hardware[2].description.tiers[0].capacity_bytes: ...".
_FIELD_PATH = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*"
    r"(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*)*)\s*:\s")
_STATUS_DETAILS_KEY = "grpc-status-details-bin"


def _field_path_from_details(rpc_error):
    """The first BadRequest field violation of a google.rpc.Status in the
    trailing metadata, when the server sends one and googleapis-common-protos
    is installed (PyPI); None otherwise."""
    try:
        metadata = rpc_error.trailing_metadata() or ()
    except Exception:  # not every RpcError is a Call
        return None
    blob = next((v for k, v in metadata if k == _STATUS_DETAILS_KEY), None)
    if blob is None:
        return None
    try:
        from google.rpc import error_details_pb2, status_pb2
    except ImportError:
        return None
    status = status_pb2.Status()
    try:
        status.ParseFromString(blob)
    except Exception:
        return None
    for detail in status.details:
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(bad) and bad.field_violations:
            return bad.field_violations[0].field
    return None


def field_path_of(message):
    """The leading field path of a server message, or None."""
    m = _FIELD_PATH.match(message or "")
    return m.group(1) if m else None


class RidgelineError(Exception):
    """A failed Ridgeline call.

    code: grpc.StatusCode (INVALID_ARGUMENT, NOT_FOUND, UNIMPLEMENTED,
      UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, ...).
    message: the server's text (field path, allowed range, value received;
      or the closest known ids for NOT_FOUND).
    field_path: the request field at fault ("workload.batch"), or None when
      the error is not about one field.
    """

    def __init__(self, code, message, field_path=None):
        super().__init__("%s: %s" % (code.name, message))
        self.code = code
        self.message = message
        self.field_path = field_path

    @classmethod
    def from_rpc_error(cls, e):
        code = e.code() if callable(getattr(e, "code", None)) else None
        message = e.details() if callable(getattr(e, "details", None)) else None
        if code is None:
            code, message = grpc.StatusCode.UNKNOWN, str(e)
        message = message or ""
        path = _field_path_from_details(e)
        if path is None and code in (grpc.StatusCode.INVALID_ARGUMENT,
                                     grpc.StatusCode.NOT_FOUND,
                                     grpc.StatusCode.UNIMPLEMENTED,
                                     grpc.StatusCode.RESOURCE_EXHAUSTED,
                                     grpc.StatusCode.FAILED_PRECONDITION,
                                     grpc.StatusCode.OUT_OF_RANGE):
            path = field_path_of(message)
        err = cls(code, message, path)
        err.__cause__ = e
        return err
