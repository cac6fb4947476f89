"""texturevlm.overlay: scenes (dicts in the JSON schema of tvlm overlay) drawn in place over
RGBA8 and RGBA16F frames by Vulkan compute and the CUDA kernels, against the CPU reference
within one 8-bit step; KNN links; refusals; nothing left behind after many draws."""

from __future__ import annotations

import os

import numpy as np
import pytest
import texturevlm as tv
from conftest import needs_cuda, needs_vulkan


def random_scene(rng: np.random.Generator, width: int, height: int, labels: bool = False) -> dict:
    def colour(alpha: bool = True) -> list:
        return [int(v) for v in rng.integers(0, 256, 4 if alpha else 3)]

    def xy() -> tuple:
        return float(rng.uniform(-20, width + 20)), float(rng.uniform(-20, height + 20))

    boxes = [
        dict(
            x=xy()[0],
            y=xy()[1],
            width=float(rng.uniform(0, 50)),
            height=float(rng.uniform(0, 50)),
            radius=float(rng.uniform(0, 8)),
            stroke_width=float(rng.uniform(0.5, 6)),
            stroke=colour(),
            fill=colour(),
        )
        for _ in range(25)
    ]
    lines = [
        dict(
            x0=xy()[0],
            y0=xy()[1],
            x1=xy()[0],
            y1=xy()[1],
            width=float(rng.uniform(0.5, 6)),
            round_caps=bool(i % 2),
            color=colour(),
        )
        for i in range(15)
    ]
    curves = [
        dict(x0=xy()[0], y0=xy()[1], x1=xy()[0], y1=xy()[1], width=float(rng.uniform(0.5, 5)), color=colour())
        for _ in range(10)
    ]
    trails = [
        dict(xy=[float(v) for v in rng.uniform(0, min(width, height), 10)], width=3.0, color=colour(False))
        for _ in range(3)
    ]
    boxes += [
        dict(
            x=xy()[0],
            y=xy()[1],
            width=float(rng.uniform(60, 150)),
            height=float(rng.uniform(60, 120)),
            radius=float(rng.uniform(0, 20)),
            stroke_width=float(rng.uniform(0.5, 8)),
            stroke=colour(),
            fill=[0, 0, 0, 0],
        )
        for _ in range(3)
    ]  # outlined: binning leaves their inner tiles out
    points = [dict(x=xy()[0], y=xy()[1], radius=float(rng.uniform(1, 5)), color=colour(), track=i) for i in range(20)]
    scene = dict(boxes=boxes, lines=lines, curves=curves, trails=trails, points=points)
    if labels:
        scene["labels"] = [
            dict(
                x=xy()[0],
                y=xy()[1],
                size=float(rng.uniform(6, 30)),
                text="person 0.97",
                color=colour(),
                background=colour(),
            )
            for _ in range(4)
        ]
    return scene


def random_frame(rng: np.random.Generator, width: int, height: int, dtype: str = "uint8") -> np.ndarray:
    if dtype == "float16":
        return rng.uniform(0, 1, (height, width, 4)).astype(np.float16)
    frame = rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    frame[..., 3] = 255
    return frame


def worst_step(a: np.ndarray, b: np.ndarray) -> float:
    """The largest difference in 8-bit steps (uint8 bytes, or float16 values times 255)."""
    if a.dtype == np.float16:
        return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max() * 255)
    return float(np.abs(a.astype(int) - b).max())


@needs_vulkan
def test_vulkan_draws_float16_frames_equal_to_the_cpu_reference(rng: np.random.Generator) -> None:
    scene = random_scene(rng, 150, 97, labels=True)
    before = random_frame(rng, 150, 97, "float16")
    gpu, cpu = before.copy(), before.copy()
    assert tv.overlay.draw(gpu, scene, knn=2, backend="vulkan") is gpu
    tv.overlay.draw(cpu, scene, knn=2, backend="cpu")
    assert worst_step(gpu, cpu) <= 1.0
    assert int((cpu != before).sum()) > 1000
    with pytest.raises(tv.Error, match="srgb=True is for uint8 frames"):
        tv.overlay.draw(gpu, scene, srgb=True, backend="cpu")


@needs_vulkan
@pytest.mark.parametrize("srgb", [False, True])
def test_vulkan_draws_equal_the_cpu_reference(rng: np.random.Generator, srgb: bool) -> None:
    for _ in range(2):
        scene = random_scene(rng, 150, 97, labels=True)
        before = random_frame(rng, 150, 97)
        gpu, cpu = before.copy(), before.copy()
        assert tv.overlay.draw(gpu, scene, knn=2, srgb=srgb, backend="vulkan") is gpu  # in place
        tv.overlay.draw(cpu, scene, knn=2, srgb=srgb, backend="cpu")
        assert int(np.abs(gpu.astype(int) - cpu).max()) <= 1
        assert int((cpu != before).sum()) > 1000


def test_knn_links_and_refusals(rng: np.random.Generator) -> None:
    frame = random_frame(rng, 64, 48)
    overlay = tv.overlay.Overlay(knn=1, backend="cpu")
    points = {"points": [{"x": 5, "y": 5, "track": 1}, {"x": 12, "y": 6, "track": 2}, {"x": 50, "y": 40, "track": 3}]}
    overlay.draw(frame, points)
    assert overlay.links == 2  # 1-2 (each other's nearest) and 3-2 (3's nearest)
    with pytest.raises(tv.Error, match=r"\[H, W, 4\] uint8"):
        tv.overlay.draw(np.zeros((8, 8, 3), np.uint8), points)
    with pytest.raises(tv.Error, match=r"uint8 \(RGBA8\) or float16 \(RGBA16F\) frames, not \[8, 8, 4\] float32"):
        tv.overlay.draw(np.zeros((8, 8, 4), np.float32), points)
    with pytest.raises(tv.Error, match='unknown key "boxs"'):
        tv.overlay.draw(frame, {"boxs": []})
    with pytest.raises(tv.Error, match="negative width"):
        tv.overlay.draw(frame, {"lines": [{"x0": 0, "y0": 0, "x1": 4, "y1": 4, "width": -1}]})
    with pytest.raises(tv.Error, match="NaN or infinite"):
        tv.overlay.draw(frame, {"points": [{"x": float("nan"), "y": 0}]})
    with pytest.raises(tv.Error, match="C-contiguous"):
        tv.overlay.draw(np.zeros((8, 16, 4), np.uint8)[:, ::2], points)
    with pytest.raises(tv.Error, match="knn must be"):
        tv.overlay.Overlay(knn=0)
    with pytest.raises(tv.Error, match="backend must be"):
        tv.overlay.Overlay(backend="cuda")
    with pytest.raises(tv.Error, match="a scene is a dict"):
        tv.overlay.draw(frame, [1, 2])
    before = frame.copy()
    tv.overlay.draw(frame, {})  # an empty scene changes nothing
    assert np.array_equal(frame, before)


@needs_vulkan
def test_a_scene_dict_draws_as_its_json_text_and_is_refused_alike(rng: np.random.Generator) -> None:
    # Dicts are read in place by the engine (no JSON text): the same frame as the scene's
    # JSON, NumPy scalars and tuples taken as their values, and every refusal the same as
    # the JSON reader's, leaving the frame as it was.
    import json

    for seed in range(3):
        scene = random_scene(np.random.default_rng(seed), 96, 64, labels=True)
        frame = random_frame(rng, 96, 64)
        from_dict = tv.overlay.draw(frame, scene, knn=2, backend="cpu", inplace=False)
        from_text = tv.overlay.draw(frame, json.dumps(scene), knn=2, backend="cpu", inplace=False)
        np.testing.assert_array_equal(from_dict, from_text)
        assert (from_dict != frame).any()
        # Keys that are not the interned ones (json.loads makes its own): matched by their text.
        from_loaded = tv.overlay.draw(frame, json.loads(json.dumps(scene)), knn=2, backend="cpu", inplace=False)
        np.testing.assert_array_equal(from_loaded, from_text)
    made = {"".join(["x"]): 20.0, "".join(["y"]): 16.0, "".join(["wid", "th"]): 12, "".join(["hei", "ght"]): 10}
    frame = random_frame(rng, 48, 32)
    np.testing.assert_array_equal(
        tv.overlay.draw(frame, {"boxes": [made]}, backend="cpu", inplace=False),
        tv.overlay.draw(frame, json.dumps({"boxes": [made]}), backend="cpu", inplace=False),
    )
    numpy_scene = {
        "boxes": [
            {
                "x": np.float32(20),
                "y": np.float64(16),
                "width": np.int64(12),
                "height": 10,
                "stroke": (255, 0, np.uint8(9)),
            }
        ],
        "points": [{"x": 5, "y": 6, "track": np.uint64(2**63 + 5)}],
    }
    plain_scene = {
        "boxes": [{"x": 20.0, "y": 16.0, "width": 12, "height": 10, "stroke": [255, 0, 9]}],
        "points": [{"x": 5, "y": 6, "track": 2**63 + 5}],
    }
    frame = random_frame(rng, 48, 32)
    np.testing.assert_array_equal(
        tv.overlay.draw(frame, numpy_scene, backend="cpu", inplace=False),
        tv.overlay.draw(frame, json.dumps(plain_scene), backend="cpu", inplace=False),
    )
    bad = [
        ({"boxs": []}, 'unknown key "boxs"'),
        ({"boxes": {}}, '"boxes" must be a list'),
        ({"boxes": [{"x": 1, "y": 1, "width": 2}]}, r'boxes\[0\]: "height" is missing'),
        ({"boxes": [{"x": 1, "y": 1, "width": 2, "height": 2, "size": 3}]}, r'boxes\[0\]: unknown key "size"'),
        ({"points": [{"x": True, "y": 0}]}, r"points\[0\].x: expected a number"),
        ({"points": [{"x": "1", "y": 0}]}, r"points\[0\].x: expected a number"),
        ({"points": [{"x": float("inf"), "y": 0}]}, "NaN or infinite"),
        ({"points": [{"x": 1e39, "y": 0}]}, "within a float's range"),
        ({"points": [{"x": 0, "y": 0, "track": -1}]}, "track: expected a non-negative integer"),
        ({"points": [{"x": 0, "y": 0, "color": [1, 2]}]}, r"color: expected \[r, g, b\]"),
        ({"points": [{"x": 0, "y": 0, "color": [1, 2, 256]}]}, r"color: expected \[r, g, b\]"),
        ({"points": [{"x": 0, "y": 0, "color": [1, 2, 3.5]}]}, r"color: expected \[r, g, b\]"),
        ({"lines": [{"x0": 0, "y0": 0, "x1": 1, "y1": 1, "round_caps": 1}]}, "round_caps: expected true or false"),
        ({"labels": [{"x": 0, "y": 0, "text": 5}]}, r"labels\[0\].text: expected a string"),
        ({"trails": [{"xy": [0, 1, "2"]}]}, r"trails\[0\].xy: expected \[x0, y0"),
        ({"boxes": [{1: 2}]}, "unknown key"),
    ]
    frame = random_frame(rng, 32, 32)
    before = frame.copy()
    for scene, match in bad:
        with pytest.raises(tv.Error, match=match):
            tv.overlay.draw(frame, scene, backend="cpu")
        if match != "NaN or infinite":  # JSON has no infinity
            with pytest.raises(tv.Error, match=match):
                tv.overlay.draw(frame, json.dumps(scene, allow_nan=True), backend="cpu")
    np.testing.assert_array_equal(frame, before)


def test_a_thousand_vulkan_draws_leave_no_fds(rng: np.random.Generator) -> None:
    frame = random_frame(rng, 40, 30)
    scene = random_scene(rng, 40, 30)
    tv.overlay.draw(frame, scene, backend="vulkan")
    fds = len(os.listdir("/proc/self/fd"))
    for _ in range(1000):
        tv.overlay.Overlay(knn=3, backend="vulkan").draw(frame, scene)
    assert len(os.listdir("/proc/self/fd")) <= fds


@needs_cuda
def test_cuda_tensors_are_drawn_in_place_equal_to_the_reference(rng: np.random.Generator) -> None:
    import torch

    overlay = tv.overlay.Overlay(knn=2)
    reference = tv.overlay.Overlay(knn=2, backend="cpu")  # in step: the same links kept by hysteresis
    for dtype, srgb in (("uint8", False), ("uint8", True), ("float16", False)):
        scene = random_scene(rng, 203, 131, labels=True)
        before = random_frame(rng, 203, 131, dtype)
        padded = torch.from_numpy(np.pad(before, ((0, 0), (0, 5), (0, 0)))).cuda()
        frame = padded[:, :203]  # rows further apart than a row: a pitch
        cpu = before.copy()
        assert overlay.draw(frame, scene, srgb=srgb) is frame
        reference.draw(cpu, scene, srgb=srgb)
        assert overlay.links == reference.links
        assert worst_step(frame.cpu().numpy(), cpu) <= 1.0
        assert int((cpu != before).sum()) > 1000
    with pytest.raises(tv.Error, match="contiguous RGBA within each row"):
        overlay.draw(torch.zeros((8, 8, 4), dtype=torch.uint8, device="cuda").transpose(0, 1), scene)
    with pytest.raises(tv.Error, match="srgb=True is for uint8 frames"):
        overlay.draw(torch.zeros((8, 8, 4), dtype=torch.float16, device="cuda"), {}, srgb=True)
    torch.cuda.synchronize()
    free = torch.cuda.mem_get_info()[0]
    for _ in range(300):
        tv.overlay.Overlay(knn=2).draw(frame, scene)
    torch.cuda.synchronize()
    assert torch.cuda.mem_get_info()[0] + (16 << 20) >= free


@needs_cuda
def test_cuda_frames_link_their_points_on_the_device_as_the_host_does(rng: np.random.Generator) -> None:
    """Jittering tracked points over twelve frames: the graph made on the frame's GPU keeps
    the same links (hysteresis included) and draws the same pixels as the host's graph."""
    import torch

    scene = random_scene(rng, 160, 120)
    on_gpu, reference = tv.overlay.Overlay(knn=3, hysteresis=2), tv.overlay.Overlay(knn=3, hysteresis=2, backend="cpu")
    counts = []
    for _ in range(12):
        for p in scene["points"]:
            p["x"] += float(rng.uniform(-6, 6))
            p["y"] += float(rng.uniform(-6, 6))
        before = random_frame(rng, 160, 120)
        frame, cpu = torch.from_numpy(before).cuda(), before.copy()
        on_gpu.draw(frame, scene)
        reference.draw(cpu, scene)
        counts.append(reference.links)
        assert on_gpu.links == reference.links
        assert worst_step(frame.cpu().numpy(), cpu) <= 1.0
    assert min(counts) > 20  # 20 points, k = 3: every frame has links to compare


def random_detections(rng: np.random.Generator, width: int, height: int, count: int) -> tuple:
    """Boxes [N, 4] (xmin, ymin, xmax, ymax) across the frame's edges, colours [N, 4], labels."""
    x0, y0 = rng.uniform(-20, width, count), rng.uniform(-20, height, count)
    boxes = np.stack([x0, y0, x0 + rng.uniform(0, 60, count), y0 + rng.uniform(0, 60, count)], 1).astype(np.float32)
    colors = rng.integers(0, 256, (count, 4)).astype(np.uint8)
    labels = [f"obj {i}" if i % 3 else "" for i in range(count)]
    return boxes, colors, labels


def as_scene(
    boxes: np.ndarray,
    colors: np.ndarray,
    labels: list,
    fill: int,
    width: float,
    radius: float,
    font_size: float,
    points: np.ndarray,
    point_colors: list,
) -> dict:
    """The dict scene draw_bounding_boxes stands for (its documented placement of labels)."""
    scene: dict = {"boxes": [], "labels": [], "points": []}
    for (x0, y0, x1, y1), c, text in zip(boxes.tolist(), colors.tolist(), labels):
        scene["boxes"].append(
            dict(
                x=(x0 + x1) / 2,
                y=(y0 + y1) / 2,
                width=x1 - x0,
                height=y1 - y0,
                radius=radius,
                stroke_width=width,
                stroke=c,
                fill=c[:3] + [fill],
            )
        )
        if text:
            above = y0 - font_size
            scene["labels"].append(
                dict(
                    x=x0,
                    y=above if above >= 0 else y0,
                    size=font_size,
                    text=text,
                    color=[255, 255, 255, 255],
                    background=c[:3] + [200],
                )
            )
    for i, (x, y) in enumerate(points.tolist()):
        scene["points"].append(dict(x=x, y=y, radius=5.0, color=point_colors, track=i))
    return scene


@pytest.mark.parametrize("backend", ["cpu", pytest.param("vulkan", marks=needs_vulkan)])
def test_bounding_boxes_from_arrays_equal_the_scene_they_stand_for(rng: np.random.Generator, backend: str) -> None:
    boxes, colors, labels = random_detections(rng, 160, 110, 30)
    points = rng.uniform(0, 150, (12, 2)).astype(np.float32)
    frame = random_frame(rng, 160, 110)
    original, want = frame.copy(), frame.copy()
    tv.overlay.Overlay(knn=2, backend=backend).draw(
        want, as_scene(boxes, colors, labels, 60, 2.5, 4.0, 14.0, points, [0, 200, 255, 255])
    )
    overlay = tv.overlay.Overlay(knn=2, backend=backend)
    got = overlay.draw_bounding_boxes(
        frame,
        boxes,
        labels=labels,
        colors=colors,
        fill=True,
        width=2.5,
        radius=4.0,
        font_size=14.0,
        points=points,
        point_colors=(0, 200, 255),
        inplace=False,
    )
    assert got is not frame
    assert np.array_equal(got, want)  # the same shapes: the same bytes
    assert overlay.links > 12
    assert int((got != frame).sum()) > 2000 and np.array_equal(frame, original)  # the frame was left as it was


def test_bounding_boxes_take_tensors(rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    boxes, _, _ = random_detections(rng, 80, 60, 10)
    frame = random_frame(rng, 80, 60)
    want = tv.overlay.draw_bounding_boxes(frame, boxes, colors=(255, 0, 0), backend="cpu", inplace=False)
    tensor = torch.from_numpy(frame.copy())  # a CPU tensor, drawn in place
    out = tv.overlay.draw_bounding_boxes(tensor, torch.from_numpy(boxes), colors=(255, 0, 0), backend="cpu")
    assert out is tensor and np.array_equal(tensor.numpy(), want) and not np.array_equal(want, frame)


def test_bounding_boxes_refusals_change_nothing(rng: np.random.Generator) -> None:
    boxes, colors, labels = random_detections(rng, 64, 48, 4)
    frame = random_frame(rng, 64, 48)
    before = frame.copy()
    bad = [
        (dict(boxes=boxes[:, :3]), r"boxes are \[N, 4\]"),
        (dict(boxes=boxes, labels=labels[:2]), "2 labels for 4 boxes"),
        (dict(boxes=boxes, colors=(300, 0, 0)), "bytes 0-255"),
        (dict(boxes=boxes, colors=np.zeros((3, 4), np.uint8)), "one per item"),
        (dict(boxes=boxes, colors=(0.5, 0.5, 0.5)), "integer bytes"),
        (dict(boxes=np.array([[0, 0, np.nan, 5]], np.float32)), "NaN or infinite"),
        (dict(boxes=np.array([[10, 10, 5, 20]], np.float32)), "negative"),
        (dict(boxes=boxes, fill=400), "opacity 0-255"),
        (dict(boxes=boxes, points=np.zeros((3, 2)), tracks=[1, 2]), "3 non-negative integer ids"),
        (dict(boxes=boxes, points=np.zeros((2, 2)), tracks=[1, 1]), "repeats track id"),
    ]
    overlay = tv.overlay.Overlay(knn=1, backend="cpu")
    for kwargs, message in bad:
        with pytest.raises(tv.Error, match=message):
            overlay.draw_bounding_boxes(frame, **kwargs)
        assert np.array_equal(frame, before)
    # Nothing to draw is not an error.
    assert np.array_equal(overlay.draw_bounding_boxes(frame, np.zeros((0, 4))), before)


@needs_cuda
def test_cuda_bounding_boxes_equal_the_reference(rng: np.random.Generator) -> None:
    import torch

    boxes, colors, labels = random_detections(rng, 150, 97, 40)
    before = random_frame(rng, 150, 97)
    cpu = tv.overlay.draw_bounding_boxes(
        before, boxes, labels=labels, colors=colors, fill=80, backend="cpu", inplace=False
    )
    frame = torch.from_numpy(before).cuda()
    out = tv.overlay.draw_bounding_boxes(
        frame,
        torch.from_numpy(boxes).cuda(),
        labels=labels,
        colors=torch.from_numpy(colors).numpy(),
        fill=80,
        inplace=False,
    )
    assert out.data_ptr() != frame.data_ptr() and torch.equal(frame.cpu(), torch.from_numpy(before))
    assert worst_step(out.cpu().numpy(), cpu) <= 1.0
