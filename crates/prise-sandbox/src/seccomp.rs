//! A seccomp filter that refuses `socket(AF_UNIX, ...)`, so that the child cannot
//! connect to Unix sockets by path (Landlock before ABI 9 does not govern them).
//! `socketpair`, which runtimes use for their own pipes, stays allowed.

use libc::{sock_filter, sock_fprog};

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// System call numbers at or above this on x86_64 are the x32 ABI's, which would
/// otherwise be a second way to call `socket`.
const X32_BIT: u32 = 0x4000_0000;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;

const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

const fn op(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The program. Offsets into `struct seccomp_data`: `nr` at 0, `arch` at 4, the low
/// half of `args[0]` at 16 (both architectures are little-endian). A jump skips that
/// many instructions after the next one.
static PROGRAM: [sock_filter; 10] = [
    op(LD_W_ABS, 0, 0, 4),
    op(JEQ_K, 0, 6, ARCH), // another architecture's calls: kill
    op(LD_W_ABS, 0, 0, 0),
    op(JGE_K, 4, 0, X32_BIT), // x32 calls: kill
    op(JEQ_K, 0, 2, libc::SYS_socket as u32),
    op(LD_W_ABS, 0, 0, 16),
    op(JEQ_K, 2, 0, libc::AF_UNIX as u32),
    op(RET_K, 0, 0, RET_ALLOW),
    op(RET_K, 0, 0, RET_KILL_PROCESS),
    op(RET_K, 0, 0, RET_ERRNO | libc::EACCES as u32),
];

/// Installs the filter on the calling thread. Only system calls: safe between fork and
/// exec. `no_new_privs` must already be set.
pub(crate) fn refuse_unix_sockets() -> std::io::Result<()> {
    let program = sock_fprog {
        len: PROGRAM.len() as u16,
        filter: PROGRAM.as_ptr().cast_mut(),
    };
    // SAFETY: the program is a valid classic BPF filter that lives for the whole
    // process (it is static); the kernel copies it.
    let result = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &program as *const sock_fprog,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
