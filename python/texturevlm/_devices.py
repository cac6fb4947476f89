"""Devices and the backends each serves. Vulkan contexts are made once per device and
shared by every pyramid on it; a CUDA device's Vulkan twin is the one with its UUID."""

from __future__ import annotations

import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import _core
from ._core import Error

log = logging.getLogger("texturevlm")

_lock = threading.Lock()
_vulkan: Dict[str, "_core.VulkanDevice"] = {}


@dataclass(frozen=True)
class Device:
    """One device of this machine and what texturevlm can run on it."""

    name: str
    uuid: str
    backends: List[str] = field(default_factory=list)  # of "cuda", "vulkan"
    cuda_index: Optional[int] = None
    vulkan_index: Optional[int] = None
    type: str = ""  # Vulkan's device type: "discrete", "cpu", ...


_listed: Dict[str, dict] = {}


def _listing(api: str) -> dict:
    """The devices of `api` ('vulkan' or 'cuda'), listed once per process: listing Vulkan
    devices makes a Vulkan instance, which costs milliseconds."""
    with _lock:
        if api not in _listed:
            _listed[api] = _core.vulkan_devices() if api == "vulkan" else _core.cuda_devices()
        return _listed[api]


def devices() -> List[Device]:
    """Every CUDA and Vulkan device, matched by UUID: a GPU that both see is one Device
    with both backends. The CPU reference backend is always there and not listed."""
    vulkan = _listing("vulkan")
    cuda = _listing("cuda")
    found: Dict[str, dict] = {}
    for d in cuda["devices"]:
        found[d["uuid"]] = dict(name=d["name"], uuid=d["uuid"], backends=["cuda"], cuda_index=d["index"])
    for d in vulkan["devices"]:
        entry = found.setdefault(d["uuid"], dict(name=d["name"], uuid=d["uuid"], backends=[]))
        entry["backends"].append("vulkan")
        entry["vulkan_index"] = d["index"]
        entry["type"] = d["type"]
    return [Device(**entry) for entry in found.values()]


def unavailable() -> Dict[str, str]:
    """Why the Vulkan or CUDA backend has no device, and why video files cannot be read
    (FFmpeg's libraries, loaded at run time, are missing: what to install); '' where each works."""
    return {
        "vulkan": _listing("vulkan")["unavailable"],
        "cuda": _listing("cuda")["unavailable"],
        "video": _core.video_unavailable(),
    }


def validation_requested() -> bool:
    """TVLM_VALIDATION=1 turns the Vulkan validation layers on (as for the tvlm command)."""
    return os.environ.get("TVLM_VALIDATION", "") not in ("", "0")


def _current_cuda_uuid() -> str:
    """The UUID of torch's current CUDA device where torch has initialised CUDA in this
    process (each rank of torch.distributed sets its own), else ''."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return ""
    uuid = str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
    return uuid[4:] if uuid.startswith("GPU-") else uuid


def vulkan_device(selector: str = "") -> "_core.VulkanDevice":
    """The shared Vulkan context for `selector` (an index, a name substring or a UUID).
    '' picks the Vulkan device that is torch's current CUDA device where torch has
    initialised CUDA (so each rank of torch.distributed opens its own GPU, whatever
    CUDA_VISIBLE_DEVICES says), else the best device. Raises Error when no Vulkan driver
    or device is found, or the current CUDA device has no Vulkan twin."""
    if not selector:
        uuid = _current_cuda_uuid()
        if uuid:
            try:
                return vulkan_device(uuid)
            except Error as e:
                raise Error(
                    f"the current CUDA device (UUID {uuid}) has no Vulkan twin: is the NVIDIA Vulkan "
                    f"driver visible to this process? {e}"
                ) from e
    with _lock:
        device = _vulkan.get(selector)
        if device is None:
            device = _core.VulkanDevice(selector, validation_requested())
            log.debug("texturevlm: Vulkan device %s (%s)", device.name, device.uuid)
            _vulkan[selector] = device
        return device
