"""Tests for companion/env.py: the doctor, cuda_compatible and diagnose."""

import json

import pytest
import torch

from companion import env
from companion.env import Check, DoctorReport, choose_wheel, cuda_compatible, diagnose, doctor

# --- cuda_compatible ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("driver", "wheel", "expected"),
    [
        ("12.4", "12.4", True),  # same version
        ("12.4", "12.1", True),  # a driver runs every older runtime
        ("12.4", "11.8", True),  # ... across major versions too
        ("13.0", "12.6", True),
        ("12.2", "12.6", True),  # minor version compatibility within CUDA 12
        ("11.4", "11.8", True),  # ... and within CUDA 11
        ("11.8", "12.1", False),  # no compatibility across a newer major version
        ("12.8", "13.0", False),
        ("10.1", "10.2", False),  # before CUDA 11, a newer runtime needs a newer driver
        ("12.4.1", "12.4", True),  # patch numbers are ignored
        ("12", "12.0", True),
    ],
)
def test_cuda_compatible_rules(driver, wheel, expected):
    assert cuda_compatible(driver, wheel) is expected


_CU12 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


@pytest.mark.parametrize(
    "driver, capability, wheels, expected",
    [
        # the newest runtime among the wheels that work, whatever the menu's order
        ("12.4", (8, 6), {"cu124": _CU12, "cu118": _CU12, "cu121": _CU12, "cpu": []}, "cu124"),
        # versions compared as numbers: cu102 (10.2) is newer than cu92 (9.2)
        ("10.2", (7, 0), {"cu92": ["sm_70"], "cu102": ["sm_70"], "cpu": []}, "cu102"),
        # minor-version compatibility from CUDA 11 on, not before, never across majors
        ("12.2", (8, 0), {"cu128": ["sm_80"], "cu118": ["sm_80"]}, "cu128"),
        ("10.0", (7, 5), {"cu92": ["sm_75"], "cu101": ["sm_75"]}, "cu92"),
        ("11.8", (8, 0), {"cu121": ["sm_80"], "cpu": []}, "cpu"),
        # SASS: the GPU's own major version, a minor version not above its own
        ("12.4", (8, 9), {"cu124": ["sm_80", "sm_86"]}, "cu124"),
        ("13.0", (7, 0), {"cu130": ["sm_75", "sm_80"], "cu128": ["sm_70"]}, "cu128"),
        ("12.6", (10, 0), {"cu124": _CU12, "cpu": []}, "cpu"),
        # three digits: sm_120 is 12.0
        ("12.9", (12, 0), {"cu128": ["sm_90", "sm_120"], "cu126": _CU12}, "cu128"),
        # PTX: any GPU at least as new, when the driver is at least as new as the runtime
        ("12.8", (12, 0), {"cu126": ["sm_90", "compute_90"], "cu124": ["sm_90"]}, "cu126"),
        (
            "12.2",
            (9, 0),
            {"cu124": ["sm_86", "compute_86"], "cu121": ["sm_86", "compute_86"]},
            "cu121",
        ),
        ("12.4", (8, 0), {"cu124": ["sm_90", "compute_90"], "cu121": ["sm_70"], "cpu": []}, "cpu"),
        # no driver, no GPU
        (None, (8, 6), {"cu126": _CU12}, "cpu"),
        ("12.4", None, {"cu124": _CU12}, "cpu"),
    ],
)
def test_choose_wheel_rules(driver, capability, wheels, expected):
    assert choose_wheel(driver, capability, wheels) == expected


def test_choose_wheel_names_a_malformed_tag_or_architecture():
    with pytest.raises(ValueError, match="'rocm6.2'"):
        choose_wheel("12.4", (8, 6), {"rocm6.2": []})
    with pytest.raises(ValueError, match="'gfx90a'"):
        choose_wheel("12.4", (8, 6), {"cu124": ["gfx90a"]})
    with pytest.raises(ValueError, match="driver_cuda"):
        choose_wheel("twelve", (8, 6), {"cu124": _CU12})


def test_cuda_compatible_validates_its_inputs():
    with pytest.raises(ValueError, match="CPU-only wheel"):
        cuda_compatible("12.4", None)
    with pytest.raises(ValueError, match="nvidia-smi"):
        cuda_compatible(None, "12.1")
    with pytest.raises(TypeError, match="string"):
        cuda_compatible(12.4, "12.1")
    with pytest.raises(ValueError, match="'MAJOR.MINOR'"):
        cuda_compatible("12.x", "12.1")
    with pytest.raises(ValueError, match="wheel_cuda='cu121'"):
        cuda_compatible("12.4", "cu121")


# --- diagnose ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "key"),
    [
        ("AssertionError: Torch not compiled with CUDA enabled", "cpu_only_wheel"),
        (
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
            "driver_too_old",
        ),
        ("RuntimeError: Found no NVIDIA driver on your system. Please check ...", "no_driver"),
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
            "no_driver",
        ),
        ("RuntimeError: CUDA error: no CUDA-capable device is detected", "no_gpu_visible"),
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; "
            "7.79 GiB total capacity)",
            "out_of_memory",
        ),
        ("RuntimeError: MPS backend out of memory (MPS allocated: 8.1 GB)", "out_of_memory"),
        (
            "RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might "
            "be asynchronously reported",
            "device_side_assert",
        ),
        (
            "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.",
            "dataloader_worker_killed",
        ),
        (
            "RuntimeError: DataLoader worker (pid(s) 101, 102) exited unexpectedly",
            "dataloader_worker_killed",
        ),
        (
            "AttributeError: Can't pickle local object 'main.<locals>.MyDataset'",
            "worker_pickling",
        ),
        ("RuntimeError: Cannot re-initialize CUDA in forked subprocess.", "cuda_fork"),
        (
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            "no_kernel_image",
        ),
        (
            "RuntimeError: Expected all tensors to be on the same device, but found at least "
            "two devices, cuda:0 and cpu!",
            "device_mismatch",
        ),
        (
            "RuntimeError: Input type (torch.FloatTensor) and weight type "
            "(torch.cuda.FloatTensor) should be the same",
            "device_mismatch",
        ),
        (
            "RuntimeError: Tensor on device meta is not on the expected device cpu!",
            "device_mismatch",
        ),
        (
            "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x1152 and 1568x10)",
            "shape_mismatch",
        ),
        (
            "RuntimeError: Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 1, 8, "
            "8] to have 3 channels, but got 1 channels instead",
            "shape_mismatch",
        ),
        (
            "ValueError: Expected input batch_size (4) to match target batch_size (5).",
            "shape_mismatch",
        ),
        (
            "RuntimeError: The size of tensor a (4) must match the size of tensor b (5) at "
            "non-singleton dimension 1",
            "shape_mismatch",
        ),
        (
            "RuntimeError: The MPS backend is supported on MacOS 12.3+. Current OS version "
            "can be queried using `sw_vers`",
            "mps_unavailable",
        ),
        ("ModuleNotFoundError: No module named 'torch'", "torch_not_installed"),
        ("ModuleNotFoundError: No module named 'torchvision'", "torch_not_installed"),
        ("RuntimeError: operator torchvision::nms does not exist", "torchvision_mismatch"),
        (
            "OSError: libtorch_cuda.so: cannot open shared object file: No such file",
            "broken_install",
        ),
        (
            "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.0",
            "numpy_abi",
        ),
        ("RuntimeError: CUDA error: invalid device ordinal", "invalid_device_ordinal"),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "cudnn_error"),
    ],
)
def test_diagnose_recognises_common_errors(message, key):
    result = diagnose(message)
    assert result.key == key
    assert result.known and result.cause and result.fix and result.matched
    assert result.matched.lower() in message.lower()


def test_diagnose_tells_no_visible_gpu_from_no_driver():
    # "no CUDA-capable device is detected" comes from a driver that answered with no GPU for this
    # process: CUDA_VISIBLE_DEVICES or a job without a GPU, not a missing driver.
    result = diagnose("RuntimeError: CUDA error: no CUDA-capable device is detected")
    assert result.key == "no_gpu_visible" and result.key != "no_driver"
    assert "CUDA_VISIBLE_DEVICES" in result.cause and "nvidia-smi" in result.fix
    assert "CUDA_VISIBLE_DEVICES" not in diagnose("Found no NVIDIA driver on your system").fix


def test_diagnose_gives_actionable_fixes():
    assert "index-url" in diagnose("Torch not compiled with CUDA enabled").fix
    assert "num_workers=0" in diagnose("DataLoader worker (pid 7) is killed by signal").fix
    assert "CUDA_LAUNCH_BLOCKING" in diagnose("device-side assert triggered").fix
    assert "find_device_mismatches" in diagnose("Expected all tensors to be on the same device").fix
    assert "batch size" in diagnose("CUDA out of memory").fix
    assert "trace_shapes" in diagnose("mat1 and mat2 shapes cannot be multiplied (4x8)").fix


def test_diagnose_accepts_the_exception_itself():
    try:
        torch.zeros(2) @ torch.zeros(3)
    except RuntimeError as err:
        result = diagnose(err)
    assert result.key == "unknown"  # a shape error is not an environment error
    assert diagnose(AssertionError("Torch not compiled with CUDA enabled")).key == "cpu_only_wheel"


def test_diagnose_unknown_text_is_sensible():
    result = diagnose("something odd happened")
    assert not result.known and result.matched == ""
    assert "doctor" in result.fix
    text = str(result)
    assert text.startswith("Cause:") and "Fix:" in text
    assert result.to_dict()["known"] is False


def test_diagnose_rejects_non_text():
    with pytest.raises(TypeError, match="string"):
        diagnose(42)


# --- doctor ------------------------------------------------------------------------------------


def test_doctor_runs_all_three_checks_on_this_machine(capsys):
    report = doctor(size=64)
    printed = capsys.readouterr().out
    assert isinstance(report, DoctorReport)
    assert {c.section for c in report.checks} == {"versions", "devices", "matmul"}
    names = [c.name for c in report.checks]
    for name in ("Python", "torch", "torchvision", "CUDA runtime", "cuDNN", "driver"):
        assert name in names
    assert report["torch"].detail.startswith(torch.__version__)
    assert report["CPU"].status == "OK" and "cores" in report["CPU"].detail
    cpu = report["cpu"]
    assert cpu.section == "matmul" and cpu.status == "OK" and cpu.seconds > 0
    assert "64x64 float32 correct" in cpu.detail
    assert report.ok and report.failures == []
    assert "[ OK ] torch" in printed and "FAIL" in printed  # the summary counts FAILs
    for line in printed.splitlines():
        if line.startswith("  ["):
            assert line[3:7] in ("OK  ", " OK ", "SKIP", "FAIL")


def test_doctor_report_as_data():
    report = doctor(size=32, verbose=False)
    data = json.loads(report.to_json())
    assert data["ok"] is True
    assert {"section", "name", "status", "detail", "seconds"} <= data["checks"][0].keys()
    assert "<table>" in report._repr_html_()
    with pytest.raises(KeyError, match="names"):
        report["no such check"]


def test_doctor_without_cuda_skips_gpu_lines(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(env.shutil, "which", lambda name: None)
    report = doctor(matmul=False, verbose=False)
    assert report["driver"].status == "SKIP" and "nvidia-smi" in report["driver"].detail
    assert report["CUDA"].status == "SKIP"
    assert report.ok
    assert not [c for c in report.checks if c.section == "matmul"]


@pytest.mark.parametrize(("cuda", "build"), [("12.6", "CUDA 12.6 build"), (None, "CPU-only build")])
def test_doctor_names_the_build_and_the_cpu_wheel_where_no_gpu_needs_cuda(monkeypatch, cuda, build):
    monkeypatch.setattr(torch.version, "cuda", cuda)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(env.shutil, "which", lambda name: None)
    report = doctor(matmul=False, verbose=False)
    assert f"{torch.__version__}, {build} (" in report["torch"].detail
    assert report["CUDA"].status == "SKIP" and report.ok
    hint = "--index-url https://download.pytorch.org/whl/cpu"
    assert (hint in report["CUDA"].detail) == (cuda is not None)


def test_doctor_fails_on_a_driver_too_old_for_the_wheel(monkeypatch):
    monkeypatch.setattr(env, "_nvidia_smi", lambda: ("470.82", "11.4", None))
    monkeypatch.setattr(torch.version, "cuda", "12.1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    report = doctor(matmul=False, verbose=False)
    assert report["driver"].status == "FAIL"
    assert "update the driver" in report["driver"].detail
    assert report["CUDA"].status == "FAIL"  # a driver is there but torch cannot use it
    assert not report.ok and len(report.failures) == 2
    assert "2 FAIL" in str(report)


def test_doctor_cpu_only_wheel_on_a_gpu_machine(monkeypatch):
    monkeypatch.setattr(env, "_nvidia_smi", lambda: ("550.54", "12.4", None))
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    report = doctor(matmul=False, verbose=False)
    assert report["CUDA runtime"].status == "SKIP"
    assert report["CUDA"].status == "FAIL" and "install a CUDA wheel" in report["CUDA"].detail


def test_doctor_minor_version_compatibility_is_ok(monkeypatch):
    monkeypatch.setattr(env, "_nvidia_smi", lambda: ("535.1", "12.2", None))
    monkeypatch.setattr(torch.version, "cuda", "12.6")
    report = doctor(matmul=False, verbose=False)
    assert report["driver"].status == "OK" and "minor version" in report["driver"].detail


def test_matmul_check_catches_a_wrong_result(monkeypatch):
    real_matmul = torch.Tensor.__matmul__

    def broken(a, b):  # a device whose float32 matmul computes garbage
        return real_matmul(a, b) * (1.1 if a.dtype == torch.float32 else 1.0)

    monkeypatch.setattr(torch.Tensor, "__matmul__", broken)
    check = env._matmul_check("cpu", 32)
    assert check.status == "FAIL" and "wrong" in check.detail


def test_matmul_check_reports_a_device_error():
    check = env._matmul_check("cuda:99" if not torch.cuda.is_available() else "cuda:999", 8)
    assert check.status == "FAIL" and check.detail


def test_nvidia_smi_parsing(monkeypatch):
    sample = "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4     |\n"

    class Done:
        stdout = sample

    monkeypatch.setattr(env.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(env.subprocess, "run", lambda *a, **k: Done())
    assert env._nvidia_smi() == ("550.54.15", "12.4", None)


def test_doctor_rejects_a_bad_size():
    with pytest.raises(ValueError, match="size"):
        doctor(size=0)


def test_check_and_report_are_plain_data():
    report = DoctorReport([Check("versions", "x", "SKIP", "absent")])
    assert report.ok and report.to_dict()["checks"][0]["status"] == "SKIP"


@pytest.mark.requires_cuda
def test_doctor_checks_every_cuda_device():
    report = doctor(size=256, verbose=False)
    assert report["CUDA"].status == "OK"
    for i in range(torch.cuda.device_count()):
        assert report[f"cuda:{i}"].status == "OK"
    assert report.ok


def test_doctor_shows_why_cuda_did_not_start(monkeypatch):
    def unavailable():
        import warnings

        warnings.warn(
            "CUDA initialization: The NVIDIA driver on your system is too old", stacklevel=1
        )
        return False

    monkeypatch.setattr(env, "_nvidia_smi", lambda: ("470.82", "11.4", None))
    monkeypatch.setattr(torch.version, "cuda", "11.4")
    monkeypatch.setattr(torch.cuda, "is_available", unavailable)
    report = doctor(matmul=False, verbose=False)
    assert report["CUDA"].status == "FAIL"
    assert "torch says: CUDA initialization: The NVIDIA driver" in report["CUDA"].detail
