"""SGLang Diffusion's MiniMax-H3 request schema, transcribed as pydantic models
(field names, types and constraints only) from sgl-project/sglang
python/sglang/multimodal_gen/runtime/entrypoints/openai/protocol.py (the H3
version of VideoGenerationsRequest and MiniMaxH3VideoGenerationsRequest, file
index id 69551108661). The PyPI release (sglang 0.5.23, installed with
--no-deps) predates the H3 models, so they cannot be imported from it.

Usage: python3 sglang_h3_schema.py BODY.json ... ; prints "ok NAME" per body
or exits 1 naming the body and pydantic's errors."""
import json
import sys
from typing import Any, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class VideoGenerationsRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    prompt: str
    input_reference: Optional[str] = None
    reference_url: Optional[str] = None
    video_path: Optional[str] = None
    video_url: Optional[str] = None
    model: Optional[str] = None
    n: Optional[int] = 1
    num_outputs_per_prompt: Optional[int] = None
    seconds: Optional[int] = 4
    size: Optional[str] = ""
    fps: Optional[int] = None
    num_frames: Optional[int] = None
    seed: Optional[Union[int, List[int]]] = None
    generator_device: Optional[str] = "cuda"
    width: Optional[int] = None
    height: Optional[int] = None
    num_inference_steps: Optional[int] = None
    guidance_scale: Optional[float] = None
    guidance_scale_2: Optional[float] = None
    true_cfg_scale: Optional[float] = None
    negative_prompt: Optional[str] = None
    max_sequence_length: Optional[int] = None
    flow_shift: Optional[float] = None
    enable_teacache: Optional[bool] = False
    output_quality: Optional[str] = "default"
    output_compression: Optional[int] = None
    output_path: Optional[str] = None
    diffusers_kwargs: Optional[Dict[str, Any]] = None
    task: Optional[str] = None
    conditions: Optional[Any] = None
    target: Optional[Any] = None
    audio_flow_shift: Optional[float] = None


class MiniMaxH3Condition(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["image", "video", "video_audio", "audio"]
    uri: str = Field(min_length=1)
    role: Literal["keyframe", "reference"]
    frame_index: Optional[int] = None
    start_time_seconds: Optional[float] = Field(default=None, ge=0)


class MiniMaxH3Target(BaseModel):
    short_edge: int = Field(gt=0)
    aspect_ratio: str = Field(min_length=1)
    duration_seconds: Optional[float] = Field(default=None, ge=4, le=15)


class MiniMaxH3VideoGenerationsRequest(VideoGenerationsRequest):
    task: Literal["t2va", "fl2va", "ref2va"]
    conditions: List[MiniMaxH3Condition] = Field(default_factory=list)
    target: MiniMaxH3Target
    audio_flow_shift: Optional[float] = Field(default=None, gt=0, allow_inf_nan=False)


bad = 0
for path in sys.argv[1:]:
    with open(path) as f:
        body = json.load(f)
    try:
        MiniMaxH3VideoGenerationsRequest.model_validate(body)
        print("ok", path)
    except ValidationError as e:
        bad += 1
        print("REFUSED", path, e)
sys.exit(1 if bad else 0)
