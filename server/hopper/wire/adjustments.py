"""What the core changed in a request, told to the client in hopper's extension
headers (vanilla SDKs ignore them; boto3 shows them in ResponseMetadata.HTTPHeaders)."""

from __future__ import annotations

from hopper.core.bounds import Adjustments
from hopper.wire.context import RequestContext

# Set, to the floor in whole seconds, when the server's visibility floor raised a
# visibility timeout of the request (requested, or the queue's default).
VISIBILITY_FLOOR_HEADER = "x-hopper-visibility-floor"


def tell(ctx: RequestContext, adjustments: Adjustments) -> None:
    if adjustments.visibility_floor is not None:
        ctx.response_headers[VISIBILITY_FLOOR_HEADER] = str(int(adjustments.visibility_floor))
