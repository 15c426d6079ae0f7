"""Ridgeline Python client.

    import ridgeline
    client = ridgeline.Client("127.0.0.1:50051")
    a = client.analyze(model="llama-3-8b", hardware="nvidia-h100-sxm-80gb",
                       batch=8, prompt_tokens=1024, generated_tokens=128)
    print(a.decode_tokens_per_second_total)

The generated messages and stubs are ridgeline.v1.<file>_pb2 / _pb2_grpc
(from proto/ridgeline/v1/*.proto); `ridgeline.pb` is ridgeline_pb2.
"""

from ridgeline._errors import RidgelineError
from ridgeline._client import Analysis, Client, open_channel
from ridgeline._step import SpillWarning, StepTimer, scenario, step_message
from ridgeline.v1 import ridgeline_pb2 as pb

__version__ = "0.1.0"
__all__ = ["Analysis", "Client", "RidgelineError", "StepTimer", "open_channel",
           "pb", "scenario", "SpillWarning", "step_message"]
