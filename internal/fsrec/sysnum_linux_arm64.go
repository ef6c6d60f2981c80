package fsrec

import "syscall"

const sysFstatat = syscall.SYS_FSTATAT
