; fusegrad x86-64 kernel alu_float32
alu_float32:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4154                           push r12
     4: 4155                           push r13
     6: 4156                           push r14
     8: 4881ecd0000000                 sub rsp, 0xd0
     f: 48893c24                       mov qword ptr [rsp], rdi
    13: 4889742408                     mov qword ptr [rsp + 8], rsi
    18: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    1d: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    22: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    27: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    2c: 488b3424                       mov rsi, qword ptr [rsp]
    30: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    35: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    3a: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    3f: bb00000000                     mov ebx, 0
.Lloop1:
    44: 4881fb71020000                 cmp rbx, 0x271
    4b: 0f8d58010000                   jge .Lexit2
    51: c5fa10049e                     vmovss xmm0, dword ptr [rsi + rbx*4]
    56: c5fa100c9f                     vmovss xmm1, dword ptr [rdi + rbx*4]
    5b: c4c17a101498                   vmovss xmm2, dword ptr [r8 + rbx*4]
    61: 410fb62c19                     movzx ebp, byte ptr [r9 + rbx]
    66: 4c8b642420                     mov r12, qword ptr [rsp + 0x20]
    6b: c5fa58d9                       vaddss xmm3, xmm0, xmm1
    6f: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    75: 4c8b642428                     mov r12, qword ptr [rsp + 0x28]
    7a: c5fa5cd9                       vsubss xmm3, xmm0, xmm1
    7e: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    84: 4c8ba42400010000               mov r12, qword ptr [rsp + 0x100]
    8c: c5fa59d9                       vmulss xmm3, xmm0, xmm1
    90: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    96: 4c8ba42408010000               mov r12, qword ptr [rsp + 0x108]
    9e: c5fa5ed9                       vdivss xmm3, xmm0, xmm1
    a2: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    a8: 4c8ba42410010000               mov r12, qword ptr [rsp + 0x110]
    b0: c5f25fd8                       vmaxss xmm3, xmm1, xmm0
    b4: c5f2c2e103                     vcmpss xmm4, xmm1, xmm1, 3
    b9: c4e3614ad940                   vblendvps xmm3, xmm3, xmm1, xmm4
    bf: c5f854e9                       vandps xmm5, xmm0, xmm1
    c3: c5fac2e100                     vcmpss xmm4, xmm0, xmm1, 0
    c8: c4e3614add40                   vblendvps xmm3, xmm3, xmm5, xmm4
    ce: c5fac2e003                     vcmpss xmm4, xmm0, xmm0, 3
    d3: c4e3614ad840                   vblendvps xmm3, xmm3, xmm0, xmm4
    d9: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
    df: 4c8ba42418010000               mov r12, qword ptr [rsp + 0x118]
    e7: c5f82ec8                       vucomiss xmm1, xmm0
    eb: 410f97c5                       seta r13b
    ef: 450fb6ed                       movzx r13d, r13b
    f3: 45882c1c                       mov byte ptr [r12 + rbx], r13b
    f7: 4c8ba42420010000               mov r12, qword ptr [rsp + 0x120]
    ff: c5f82ec1                       vucomiss xmm0, xmm1
   103: 410f95c5                       setne r13b
   107: 410f9ac6                       setp r14b
   10b: 4509f5                         or r13d, r14d
   10e: 450fb6ed                       movzx r13d, r13b
   112: 45882c1c                       mov byte ptr [r12 + rbx], r13b
   116: 4c8ba42428010000               mov r12, qword ptr [rsp + 0x128]
   11e: c5f82ec1                       vucomiss xmm0, xmm1
   122: 410f94c5                       sete r13b
   126: 410f9bc6                       setnp r14b
   12a: 4521f5                         and r13d, r14d
   12d: 450fb6ed                       movzx r13d, r13b
   131: 45882c1c                       mov byte ptr [r12 + rbx], r13b
   135: 4c8ba42430010000               mov r12, qword ptr [rsp + 0x130]
   13d: c5f8571d7b000000               vxorps xmm3, xmm0, xmmword ptr [rip + .LC0]
   145: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
   14b: 4c8ba42438010000               mov r12, qword ptr [rsp + 0x138]
   153: c5fa51d8                       vsqrtss xmm3, xmm0, xmm0
   157: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
   15d: 4c8ba42440010000               mov r12, qword ptr [rsp + 0x140]
   165: c4e3790ad80b                   vroundss xmm3, xmm0, xmm0, 0xb
   16b: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
   171: 4c8ba42448010000               mov r12, qword ptr [rsp + 0x148]
   179: 48f7dd                         neg rbp
   17c: c4e1f96edd                     vmovq xmm3, rbp
   181: c4e3714ad830                   vblendvps xmm3, xmm1, xmm0, xmm3
   187: c4c17a111c9c                   vmovss dword ptr [r12 + rbx*4], xmm3
   18d: 488bac2450010000               mov rbp, qword ptr [rsp + 0x150]
   195: c4e279b9d1                     vfmadd231ss xmm2, xmm0, xmm1
   19a: c5fa11549d00                   vmovss dword ptr [rbp + rbx*4], xmm2
   1a0: 4883c301                       add rbx, 1
   1a4: e99bfeffff                     jmp .Lloop1
.Lexit2:
   1a9: c5f877                         vzeroupper
   1ac: 4881c4d0000000                 add rsp, 0xd0
   1b3: 415e                           pop r14
   1b5: 415d                           pop r13
   1b7: 415c                           pop r12
   1b9: 5d                             pop rbp
   1ba: 5b                             pop rbx
   1bb: c3                             ret
   1bc: cccccccc                       ; padding
.LC0:
   1c0: 0000008000000080000000800000008000000080000000800000008000000080 ; f32 -0.0 / f64 -1.0609978955e-314
