"""Drives `h3studio serve` with the stock OpenAI Python SDK (openai from PyPI):
videos.create (JSON and multipart), poll, download_content, list and delete,
then checks the MP4 with ffprobe. Run by serve_api_test.go:
python3 openai_sdk_videos.py BASE_URL TOKEN OUT_DIR FIRST_FRAME_PNG"""
import json
import os
import subprocess
import sys

import openai
from openai import OpenAI

base, token, out, first = sys.argv[1:5]
client = OpenAI(base_url=base + "/v1", api_key=token, max_retries=0, timeout=60)
fast = {"num_inference_steps": 4, "seed": 3}


def probe(path):
    p = subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", path],
                       capture_output=True, text=True, check=True)
    streams = json.loads(p.stdout)["streams"]
    v = [s for s in streams if s["codec_type"] == "video"]
    a = [s for s in streams if s["codec_type"] == "audio"]
    assert v and a, streams
    assert v[0]["codec_name"] == "h264" and a[0]["codec_name"] == "aac", streams
    return v[0]["width"], v[0]["height"]


# JSON: the SDK sends JSON when input_reference is not a file.
v = client.videos.create(model="h3", prompt="A lighthouse in a storm, waves, wind.", size="256x256",
                         seconds="1", extra_body=fast)
assert v.object == "video" and v.status in ("queued", "in_progress"), v
done = client.videos.poll(v.id)  # honours openai-poll-after-ms
assert done.status == "completed", done
assert done.progress == 100 and done.size == "256x256", done
mp4 = os.path.join(out, "json.mp4")
client.videos.download_content(v.id, variant="video").write_to_file(mp4)
assert probe(mp4) == (256, 256)

# Multipart: input_reference as a file is the first frame (fl2va).
with open(first, "rb") as f:
    m = client.videos.create(model="MiniMaxAI/MiniMax-H3", prompt="The frame comes alive.", size="256x256",
                             seconds="1", input_reference=f, extra_body=fast)
m = client.videos.poll(m.id)
assert m.status == "completed", m
mp4 = os.path.join(out, "multipart.mp4")
client.videos.download_content(m.id).write_to_file(mp4)
assert probe(mp4) == (256, 256)

ids = [x.id for x in client.videos.list(limit=100)]
assert v.id in ids and m.id in ids, ids
assert len(client.videos.list(limit=1).data) == 1

# Delete ends a queued or running take.
long = client.videos.create(prompt="A long take.", size="256x256", seconds="1",
                            extra_body={"num_inference_steps": 500})
d = client.videos.delete(long.id)
assert d.id == long.id, d
ended = client.videos.poll(long.id, poll_interval_ms=200)
assert ended.status == "failed" and ended.error and ended.error.code == "cancelled", ended

# The server's refusals reach the SDK as its own exceptions.
try:
    client.videos.create(prompt="x", size="100x100", seconds="1")
    raise SystemExit("size 100x100 was accepted")
except openai.BadRequestError as e:
    assert "32" in str(e), e
try:
    OpenAI(base_url=base + "/v1", api_key="wrong-token-000000", max_retries=0).videos.list()
    raise SystemExit("a wrong token was accepted")
except openai.AuthenticationError:
    pass
print("openai sdk: ok", v.id, m.id, long.id)
