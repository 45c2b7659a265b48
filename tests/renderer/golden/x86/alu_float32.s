; fusegrad x86-64 kernel alu_float32
alu_float32:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4154                           push r12
     4: 4155                           push r13
     6: 4156                           push r14
     8: 4883ec30                       sub rsp, 0x30
     c: 48893c24                       mov qword ptr [rsp], rdi
    10: 4889742408                     mov qword ptr [rsp + 8], rsi
    15: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    1a: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    1f: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    24: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    29: 488b3424                       mov rsi, qword ptr [rsp]
    2d: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    32: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    37: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    3c: bb00000000                     mov ebx, 0
.Lloop1:
    41: 4881fb71020000                 cmp rbx, 0x271
    48: 0f8d52010000                   jge .Lexit2
    4e: c5fa10049e                     vmovss xmm0, dword ptr [rsi + rbx*4]
    53: c5fa100c9f                     vmovss xmm1, dword ptr [rdi + rbx*4]
    58: c4c17a101498                   vmovss xmm2, dword ptr [r8 + rbx*4]
    5e: 410fb62c19                     movzx ebp, byte ptr [r9 + rbx]
    63: 4c8b642420                     mov r12, qword ptr [rsp + 0x20]
    68: c5fa58d9                       vaddss xmm3, xmm0, xmm1
    6c: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    72: 4c8b642428                     mov r12, qword ptr [rsp + 0x28]
    77: c5fa5cd9                       vsubss xmm3, xmm0, xmm1
    7b: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    81: 4c8b642460                     mov r12, qword ptr [rsp + 0x60]
    86: c5fa59d9                       vmulss xmm3, xmm0, xmm1
    8a: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    90: 4c8b642468                     mov r12, qword ptr [rsp + 0x68]
    95: c5fa5ed9                       vdivss xmm3, xmm0, xmm1
    99: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    9f: 4c8b642470                     mov r12, qword ptr [rsp + 0x70]
    a4: c5f25fd8                       vmaxss xmm3, xmm1, xmm0
    a8: c5f2c2e103                     vcmpss xmm4, xmm1, xmm1, 3
    ad: c4e3614ad940                   vblendvps xmm3, xmm3, xmm1, xmm4
    b3: c5f854e9                       vandps xmm5, xmm0, xmm1
    b7: c5fac2e100                     vcmpss xmm4, xmm0, xmm1, 0
    bc: c4e3614add40                   vblendvps xmm3, xmm3, xmm5, xmm4
    c2: c5fac2e003                     vcmpss xmm4, xmm0, xmm0, 3
    c7: c4e3614ad840                   vblendvps xmm3, xmm3, xmm0, xmm4
    cd: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    d3: 4c8b642478                     mov r12, qword ptr [rsp + 0x78]
    d8: c5f82ec8                       vucomiss xmm1, xmm0
    dc: 410f97c5                       seta r13b
    e0: 450fb6ed                       movzx r13d, r13b
    e4: 45882c1c                       mov byte ptr [r12 + rbx], r13b
    e8: 4c8ba42480000000               mov r12, qword ptr [rsp + 0x80]
    f0: c5f82ec1                       vucomiss xmm0, xmm1
    f4: 410f95c5                       setne r13b
    f8: 410f9ac6                       setp r14b
    fc: 4509f5                         or r13d, r14d
    ff: 450fb6ed                       movzx r13d, r13b
   103: 45882c1c                       mov byte ptr [r12 + rbx], r13b
   107: 4c8ba42488000000               mov r12, qword ptr [rsp + 0x88]
   10f: c5f82ec1                       vucomiss xmm0, xmm1
   113: 410f94c5                       sete r13b
   117: 410f9bc6                       setnp r14b
   11b: 4521f5                         and r13d, r14d
   11e: 450fb6ed                       movzx r13d, r13b
   122: 45882c1c                       mov byte ptr [r12 + rbx], r13b
   126: 4c8ba42490000000               mov r12, qword ptr [rsp + 0x90]
   12e: c5f8571d8a000000               vxorps xmm3, xmm0, xmmword ptr [rip + .LC0]
   136: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
   13c: 4c8ba42498000000               mov r12, qword ptr [rsp + 0x98]
   144: c5fa51d8                       vsqrtss xmm3, xmm0, xmm0
   148: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
   14e: 4c8ba424a0000000               mov r12, qword ptr [rsp + 0xa0]
   156: c4e3790ad80b                   vroundss xmm3, xmm0, xmm0, 0xb
   15c: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
   162: 4c8ba424a8000000               mov r12, qword ptr [rsp + 0xa8]
   16a: c5f828d9                       vmovaps xmm3, xmm1
   16e: 85ed                           test ebp, ebp
   170: 0f8404000000                   je .Lwhere3
   176: c5f828d8                       vmovaps xmm3, xmm0
.Lwhere3:
   17a: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
   180: 488bac24b0000000               mov rbp, qword ptr [rsp + 0xb0]
   188: c5f828d2                       vmovaps xmm2, xmm2
   18c: c4e279b9d1                     vfmadd231ss xmm2, xmm0, xmm1
   191: c5fa11549d00                   vmovss dword ptr [rbp + rbx*4], xmm2
   197: 4883c301                       add rbx, 1
   19b: e9a1feffff                     jmp .Lloop1
.Lexit2:
   1a0: 4883c430                       add rsp, 0x30
   1a4: 415e                           pop r14
   1a6: 415d                           pop r13
   1a8: 415c                           pop r12
   1aa: 5d                             pop rbp
   1ab: 5b                             pop rbx
   1ac: c3                             ret
   1ad: cccccccccccccccccccccccccccccccccccccc ; padding
.LC0:
   1c0: 0000008000000080000000800000008000000080000000800000008000000080 ; f32 -0.0 / f64 -1.0609978955e-314
