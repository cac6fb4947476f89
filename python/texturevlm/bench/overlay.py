"""python -m texturevlm.bench overlay: texturevlm.overlay on a 3840x2160 frame in a CUDA
tensor against the CPU ways users draw today, on the same scenes in the same run: OpenCV
(antialiased rectangles, text, circles and polylines; translucent fills blended with
addWeighted) and torchvision's draw_bounding_boxes / draw_keypoints. Each figure is wall
time per call from Python (texturevlm's: pipelined, the host waiting once per run), next to
the floor: the frame read and written once at the measured device copy rate. texturevlm's
calls include parsing the scene and, with links, the KNN graph (made on the tensor's GPU)."""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np
import torch

import texturevlm as tv

WIDTH, HEIGHT = 3840, 2160


def _scene(rng: np.random.Generator, boxes: int, labels: bool, points: int) -> dict:
    """Boxes of 40-300 pixels a side, a third filled, labelled over their top edge; tracked
    points (tvlm bench overlay's scenes)."""
    out: dict = {"boxes": [], "labels": [], "points": []}
    for i in range(boxes):
        w, h = (float(v) for v in rng.uniform(40, 300, 2))
        x, y = float(rng.uniform(0, WIDTH)), float(rng.uniform(0, HEIGHT))
        out["boxes"].append(
            dict(
                x=x,
                y=y,
                width=w,
                height=h,
                radius=8,
                stroke_width=3,
                stroke=[255, 80, 80],
                fill=[255, 80, 80, 60] if i % 3 == 0 else [0, 0, 0, 0],
            )
        )
        if labels:
            out["labels"].append(
                dict(
                    x=x - w / 2,
                    y=y - h / 2 - 20,
                    size=20,
                    text="person 0.97" if i % 2 else "car 0.81",
                    color=[255, 255, 255],
                    background=[255, 80, 80, 200],
                )
            )
    for i in range(points):
        out["points"].append(
            dict(
                x=float(rng.uniform(0, WIDTH)), y=float(rng.uniform(0, HEIGHT)), radius=5, color=[255, 255, 0], track=i
            )
        )
    return out


def _bezier(x0: float, y0: float, x1: float, y1: float, steps: int = 16) -> np.ndarray:
    """The design's curved link (control point 0.3 of the length along the normal),
    flattened for OpenCV's polylines."""
    mx, my = (x0 + x1) / 2, (y0 + y1) / 2
    cx, cy = mx - 0.3 * (y1 - y0), my + 0.3 * (x1 - x0)
    t = np.linspace(0, 1, steps)[:, None]
    p = (1 - t) ** 2 * np.array([x0, y0]) + 2 * (1 - t) * t * np.array([cx, cy]) + t**2 * np.array([x1, y1])
    return np.round(p).astype(np.int32)


def _knn_pairs(scene: dict, k: int) -> List[Tuple[int, int]]:
    """Each point to its k nearest, symmetric and once (what the CPU ways must compute too)."""
    xy = np.array([(p["x"], p["y"]) for p in scene["points"]])
    if len(xy) < 2:
        return []
    d = ((xy[:, None] - xy[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    near = np.argsort(d, axis=1, kind="stable")[:, :k]
    return sorted({(min(a, b), max(a, b)) for a in range(len(xy)) for b in near[a]})


def _opencv(frame: np.ndarray, scene: dict, k: int) -> None:
    import cv2

    filled = [b for b in scene["boxes"] if b["fill"][3]]
    if filled:  # translucent fills: drawn on a copy, blended back (OpenCV has no alpha drawing)
        layer = frame.copy()
        for b in filled:
            p0 = (int(b["x"] - b["width"] / 2), int(b["y"] - b["height"] / 2))
            p1 = (int(b["x"] + b["width"] / 2), int(b["y"] + b["height"] / 2))
            cv2.rectangle(layer, p0, p1, (80, 80, 255), -1, cv2.LINE_AA)
        cv2.addWeighted(layer, 60 / 255, frame, 1 - 60 / 255, 0, dst=frame)
    for b in scene["boxes"]:
        p0 = (int(b["x"] - b["width"] / 2), int(b["y"] - b["height"] / 2))
        p1 = (int(b["x"] + b["width"] / 2), int(b["y"] + b["height"] / 2))
        cv2.rectangle(frame, p0, p1, (80, 80, 255), 3, cv2.LINE_AA)
    for label in scene["labels"]:
        at = (int(label["x"]), int(label["y"] + 16))
        cv2.rectangle(frame, (at[0], at[1] - 18), (at[0] + 11 * len(label["text"]), at[1] + 4), (80, 80, 255), -1)
        cv2.putText(frame, label["text"], at, cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA)
    pts = scene["points"]
    if k:
        curves = [_bezier(pts[a]["x"], pts[a]["y"], pts[b]["x"], pts[b]["y"]) for a, b in _knn_pairs(scene, k)]
        cv2.polylines(frame, curves, False, (90, 214, 255), 2, cv2.LINE_AA)
    for p in pts:
        cv2.circle(frame, (int(p["x"]), int(p["y"])), 5, (0, 255, 255), -1, cv2.LINE_AA)


def _torchvision(image: torch.Tensor, scene: dict, k: int) -> torch.Tensor:
    from torchvision.utils import draw_bounding_boxes, draw_keypoints

    if scene["boxes"]:
        boxes = torch.tensor(
            [
                [b["x"] - b["width"] / 2, b["y"] - b["height"] / 2, b["x"] + b["width"] / 2, b["y"] + b["height"] / 2]
                for b in scene["boxes"]
            ]
        )
        labels = [label["text"] for label in scene["labels"]] or None
        image = draw_bounding_boxes(image, boxes, labels=labels, colors="red", fill=True, width=3)
    if scene["points"]:
        xy = torch.tensor([[[p["x"], p["y"]] for p in scene["points"]]])
        pairs = _knn_pairs(scene, k) if k else None
        image = draw_keypoints(image, xy, connectivity=pairs, colors="yellow", radius=5, width=2)
    return image


def run(table: Any, per_call_us: Any) -> None:
    rng = np.random.default_rng(7)
    frame = torch.full((HEIGHT, WIDTH, 4), 40, dtype=torch.uint8, device="cuda")
    floor_bytes = 2 * frame.numel()
    host = np.full((HEIGHT, WIDTH, 3), 40, np.uint8)
    image = torch.full((3, HEIGHT, WIDTH), 40, dtype=torch.uint8)
    for name, boxes, labels, points, k in (
        ("100 boxes with labels", 100, True, 0, 0),
        ("1000 boxes", 1000, False, 0, 0),
        ("100 points, k = 5 Bezier links", 0, False, 100, 5),
        ("the design's frame: 100 boxes with labels, 100 points, k = 5", 100, True, 100, 5),
    ):
        scene = _scene(rng, boxes, labels, points)
        job = f"overlay {WIDTH}x{HEIGHT}: {name}"
        overlay = tv.overlay.Overlay(knn=k or None)
        t = per_call_us(lambda: overlay.draw(frame, scene), calls=50, runs=5)
        table.add(job, "texturevlm.overlay on a CUDA tensor (scene parse; KNN graph on the GPU)", t, floor_bytes)
        base = t[0]
        if boxes and not points:  # the same boxes and labels from arrays: no JSON
            xyxy = np.array(
                [
                    [
                        b["x"] - b["width"] / 2,
                        b["y"] - b["height"] / 2,
                        b["x"] + b["width"] / 2,
                        b["y"] + b["height"] / 2,
                    ]
                    for b in scene["boxes"]
                ],
                np.float32,
            )
            texts = [label["text"] for label in scene["labels"]] or None
            t = per_call_us(
                lambda: overlay.draw_bounding_boxes(
                    frame, xyxy, labels=texts, colors=(255, 80, 80), fill=True, radius=8
                ),
                calls=50,
                runs=5,
            )
            table.add(
                job,
                "texturevlm.overlay.draw_bounding_boxes on a CUDA tensor (arrays, no JSON)",
                t,
                floor_bytes,
                f"{base / t[0]:.1f}x faster than the scene dict",
            )
        try:
            import cv2  # noqa: F401

            t = per_call_us(lambda: _opencv(host, scene, k), calls=3, runs=3)
            table.add(
                job, "OpenCV (CPU, LINE_AA, addWeighted fills)", t, floor_bytes, f"texturevlm {t[0] / base:.0f}x faster"
            )
        except ImportError:
            print("  OpenCV is not installed: no OpenCV row")
        try:
            import torchvision  # noqa: F401

            t = per_call_us(lambda: _torchvision(image, scene, k), calls=2, runs=3)
            table.add(
                job,
                "torchvision draw_bounding_boxes / draw_keypoints (CPU)",
                t,
                floor_bytes,
                f"texturevlm {t[0] / base:.0f}x faster",
            )
        except ImportError:
            print("  torchvision is not installed: no torchvision row")
