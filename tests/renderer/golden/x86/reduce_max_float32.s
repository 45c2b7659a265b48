; fusegrad x86-64 kernel reduce_max_float32
reduce_max_float32:
     0: 53                             push rbx
     1: 4881ecb0000000                 sub rsp, 0xb0
     8: 48893c24                       mov qword ptr [rsp], rdi
     c: 4889742408                     mov qword ptr [rsp + 8], rsi
    11: 488b3424                       mov rsi, qword ptr [rsp]
    15: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    1a: 41b800000000                   mov r8d, 0
.Lloop1:
    20: 4983f803                       cmp r8, 3
    24: 0f8d6f000000                   jge .Lexit2
    2a: c5fa10058e000000               vmovss xmm0, dword ptr [rip + .LC0]
    32: 41b900000000                   mov r9d, 0
.Lloop3:
    38: 4983f904                       cmp r9, 4
    3c: 0f8d48000000                   jge .Lexit4
    42: 416bd804                       imul ebx, r8d, 4
    46: 4863db                         movsxd rbx, ebx
    49: 4401cb                         add ebx, r9d
    4c: 4863db                         movsxd rbx, ebx
    4f: c5fa100c9e                     vmovss xmm1, dword ptr [rsi + rbx*4]
    54: c5f25fd0                       vmaxss xmm2, xmm1, xmm0
    58: c5f2c2d903                     vcmpss xmm3, xmm1, xmm1, 3
    5d: c4e3694ad130                   vblendvps xmm2, xmm2, xmm1, xmm3
    63: c5f854e1                       vandps xmm4, xmm0, xmm1
    67: c5fac2d900                     vcmpss xmm3, xmm0, xmm1, 0
    6c: c4e3694ad430                   vblendvps xmm2, xmm2, xmm4, xmm3
    72: c5fac2d803                     vcmpss xmm3, xmm0, xmm0, 3
    77: c4e3694ad030                   vblendvps xmm2, xmm2, xmm0, xmm3
    7d: c5f828c2                       vmovaps xmm0, xmm2
    81: 4983c101                       add r9, 1
    85: e9aeffffff                     jmp .Lloop3
.Lexit4:
    8a: c4a17a110487                   vmovss dword ptr [rdi + r8*4], xmm0
    90: 4983c001                       add r8, 1
    94: e987ffffff                     jmp .Lloop1
.Lexit2:
    99: c5f877                         vzeroupper
    9c: 4881c4b0000000                 add rsp, 0xb0
    a3: 5b                             pop rbx
    a4: c3                             ret
    a5: cccccccccccccccccccccccccccccccccccccccccccccccccccccc ; padding
.LC0:
    c0: 000080ff000080ff000080ff000080ff000080ff000080ff000080ff000080ff ; f32 -inf / f64 -1.4044490983809555e+306
