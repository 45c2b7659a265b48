; fusegrad x86-64 kernel reduce_max_float32
reduce_max_float32:
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
    22: 0f8d83000000                   jge .Lexit2
    28: c5fa100590000000               vmovss xmm0, dword ptr [rip + .LC0]
    30: 41b900000000                   mov r9d, 0
.Lloop3:
    36: 4983f904                       cmp r9, 4
    3a: 0f8d58000000                   jge .Lexit4
    40: c5f828c8                       vmovaps xmm1, xmm0
    44: 4c89c3                         mov rbx, r8
    47: 48c7c504000000                 mov rbp, 4
    4e: 0fafdd                         imul ebx, ebp
    51: 4863db                         movsxd rbx, ebx
    54: 4889db                         mov rbx, rbx
    57: 4401cb                         add ebx, r9d
    5a: 4863db                         movsxd rbx, ebx
    5d: c5fa10149e                     vmovss xmm2, dword ptr [rsi + rbx*4]
    62: c5ea5fd9                       vmaxss xmm3, xmm2, xmm1
    66: c5eac2e203                     vcmpss xmm4, xmm2, xmm2, 3
    6b: c4e3614ada40                   vblendvps xmm3, xmm3, xmm2, xmm4
    71: c5f054ea                       vandps xmm5, xmm1, xmm2
    75: c5f2c2e200                     vcmpss xmm4, xmm1, xmm2, 0
    7a: c4e3614add40                   vblendvps xmm3, xmm3, xmm5, xmm4
    80: c5f2c2e103                     vcmpss xmm4, xmm1, xmm1, 3
    85: c4e3614ad940                   vblendvps xmm3, xmm3, xmm1, xmm4
    8b: c5f828c3                       vmovaps xmm0, xmm3
    8f: 4983c101                       add r9, 1
    93: e99effffff                     jmp .Lloop3
.Lexit4:
    98: c5f828c0                       vmovaps xmm0, xmm0
    9c: c4a17a110487                   vmovss dword ptr [rdi + r8*4], xmm0
    a2: 4983c001                       add r8, 1
    a6: e973ffffff                     jmp .Lloop1
.Lexit2:
    ab: 4883c418                       add rsp, 0x18
    af: 5d                             pop rbp
    b0: 5b                             pop rbx
    b1: c3                             ret
    b2: cccccccccccccccccccccccccccc   ; padding
.LC0:
    c0: 000080ff000080ff000080ff000080ff000080ff000080ff000080ff000080ff ; f32 -inf / f64 -1.4044490983809555e+306
