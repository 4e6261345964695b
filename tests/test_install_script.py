"""scripts/install_dependencies.sh, run in a made-up machine: a PATH of stand-in commands
(apt-get, sudo and id record how they were called), CMake package configs in a scratch
prefix, and a stand-in Python. It must install exactly what is missing, as root or
through sudo, and where it can do neither say what to install in one line."""
import os
import stat
import subprocess
import tempfile
import textwrap
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "install_dependencies.sh"
# What the script itself calls, taken from the real machine.
TOOLS = ("bash", "cat", "env", "head", "mktemp", "rm", "sed", "sort", "tr")
ALL_PACKAGES = ["cmake", "make", "g++", "libfmt-dev", "libcli11-dev", "libgtest-dev", "python3-matplotlib"]
CONFIGS = {
    "libfmt-dev": "lib/x86_64-linux-gnu/cmake/fmt/fmt-config.cmake",
    "libcli11-dev": "share/cmake/CLI11/CLI11Config.cmake",
    "libgtest-dev": "lib/cmake/GTest/GTestConfig.cmake",
}


def which(tool):
    for folder in os.environ["PATH"].split(os.pathsep) + ["/usr/bin", "/bin"]:
        candidate = Path(folder) / tool
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(tool)


class MadeUpMachine:
    def __init__(self, root, have=(), uid=0, sudo=None, cmake_version="3.25.1"):
        self.root = Path(root)
        self.bin = self.root / "bin"
        self.prefix = self.root / "prefix"
        self.calls = self.root / "calls.log"
        self.bin.mkdir()
        self.prefix.mkdir()
        for tool in TOOLS:
            (self.bin / tool).symlink_to(which(tool))
        self.stub("nvcc", "exit 0")
        self.stub("id", f'[ "$1" = -u ] && echo {uid}')
        self.stub("apt-get", f'echo "apt-get $*" >>{self.calls}')
        if sudo == "without password":
            self.stub("sudo", f'echo "sudo $*" >>{self.calls}; [ "$1" = -n ] && shift; "$@"')
        elif sudo == "with password":
            self.stub("sudo", f'[ "$1" = -n ] && exit 1; echo "sudo $*" >>{self.calls}; "$@"')
        if "cmake" in have:
            self.stub("cmake", f'echo "cmake version {cmake_version}"')
        for command in ("make", "g++"):
            if command in have:
                self.stub(command, "exit 0")
        for package, config in CONFIGS.items():
            if package in have:
                (self.prefix / config).parent.mkdir(parents=True)
                (self.prefix / config).touch()
        self.python = self.stub("python3", "exit 0" if "python3-matplotlib" in have else "exit 1")

    def stub(self, name, body):
        path = self.bin / name
        path.write_text(f"#!{which('bash')}\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return path

    def run(self, *arguments):
        environment = {"PATH": str(self.bin), "SGEMM_DEPENDENCY_PREFIXES": str(self.prefix),
                       "SGEMM_PYTHONS": str(self.python), "HOME": str(self.root)}
        result = subprocess.run([str(self.bin / "bash"), str(SCRIPT), *arguments], env=environment,
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        calls = self.calls.read_text().splitlines() if self.calls.exists() else []
        return result, calls


class InstallDependencies(unittest.TestCase):
    def machine(self, **kwargs):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        return MadeUpMachine(scratch.name, **kwargs)

    def test_nothing_missing_installs_nothing(self):
        result, calls = self.machine(have=ALL_PACKAGES, uid=1000).run()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        self.assertEqual(calls, [])

    def test_root_installs_exactly_what_is_missing(self):
        have = ["cmake", "make", "g++", "libgtest-dev"]
        result, calls = self.machine(have=have, uid=0).run()
        self.assertIn("apt-get update -qq", calls)
        installs = [call for call in calls if " install " in call]
        self.assertEqual(len(installs), 1, calls)
        self.assertEqual(installs[0].split()[-3:], ["libfmt-dev", "libcli11-dev", "python3-matplotlib"])
        self.assertFalse(any(call.startswith("sudo") for call in calls))
        # The stand-in apt-get installs nothing, so the check after it must fail.
        self.assertEqual(result.returncode, 1)
        self.assertIn("still missing after apt-get install: libfmt-dev libcli11-dev python3-matplotlib",
                      result.stderr)

    def test_a_fresh_machine_asks_for_everything(self):
        result, calls = self.machine(have=(), uid=0).run()
        installs = [call for call in calls if " install " in call]
        self.assertEqual(installs[0].split()[-len(ALL_PACKAGES):], ALL_PACKAGES)

    def test_cmake_older_than_the_build_needs_counts_as_missing(self):
        result, _ = self.machine(have=ALL_PACKAGES, cmake_version="3.22.1").run("--check")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr, "sgemm: missing: cmake\n")

    def test_sudo_without_a_password_is_used(self):
        result, calls = self.machine(have=["cmake", "make", "g++"], uid=1000, sudo="without password").run()
        self.assertTrue(any(call.startswith("sudo ") and "apt-get install" in call for call in calls), calls)

    def test_no_root_and_no_sudo_says_what_to_install_in_one_line(self):
        for sudo in (None, "with password"):  # a password sudo cannot ask for without a terminal
            with self.subTest(sudo=sudo):
                result, calls = self.machine(have=["cmake", "make", "g++", "libgtest-dev"], uid=1000,
                                             sudo=sudo).run()
                self.assertEqual(result.returncode, 1)
                self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
                self.assertIn("apt-get install libfmt-dev libcli11-dev python3-matplotlib", result.stderr)
                self.assertEqual([call for call in calls if "apt-get" in call], [])

    def test_check_installs_nothing(self):
        result, calls = self.machine(have=["make", "g++"], uid=0).run("--check")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr, textwrap.dedent("""\
            sgemm: missing: cmake libfmt-dev libcli11-dev libgtest-dev python3-matplotlib
            """))
        self.assertEqual(calls, [])


if __name__ == "__main__":
    unittest.main()
