; fusegrad x86-64 kernel reduce_add_float32
reduce_add_float32:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4883ec18                       sub rsp, 0x18
     6: 48893c24                       mov qword ptr [rsp], rdi
     a: 4889742408                     mov qword ptr [rsp + 8], rsi
     f: 488b3424                       mov rsi, qword ptr [rsp]
    13: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    18: 41b800000000                   mov r8d, 0
.Lloop1:
    1e: 4983f803                       cmp r8, 3
    22: 0f8d5e000000                   jge .Lexit2
    28: c5fa100570000000               vmovss xmm0, dword ptr [rip + .LC0]
    30: 41b900000000                   mov r9d, 0
.Lloop3:
    36: 4983f904                       cmp r9, 4
    3a: 0f8d33000000                   jge .Lexit4
    40: c5f828c8                       vmovaps xmm1, xmm0
    44: 4c89c3                         mov rbx, r8
    47: 48c7c504000000                 mov rbp, 4
    4e: 0fafdd                         imul ebx, ebp
    51: 4863db                         movsxd rbx, ebx
    54: 4889db                         mov rbx, rbx
    57: 4401cb                         add ebx, r9d
    5a: 4863db                         movsxd rbx, ebx
    5d: c5fa10149e                     vmovss xmm2, dword ptr [rsi + rbx*4]
    62: c5f258ca                       vaddss xmm1, xmm1, xmm2
    66: c5f828c1                       vmovaps xmm0, xmm1
    6a: 4983c101                       add r9, 1
    6e: e9c3ffffff                     jmp .Lloop3
.Lexit4:
    73: c5f828c0                       vmovaps xmm0, xmm0
    77: c4a17a110487                   vmovss dword ptr [rdi + r8*4], xmm0
    7d: 4983c001                       add r8, 1
    81: e998ffffff                     jmp .Lloop1
.Lexit2:
    86: 4883c418                       add rsp, 0x18
    8a: 5d                             pop rbp
    8b: 5b                             pop rbx
    8c: c3                             ret
    8d: cccccccccccccccccccccccccccccccccccccc ; padding
.LC0:
    a0: 0000000000000000000000000000000000000000000000000000000000000000 ; f32 0.0 / f64 0.0
