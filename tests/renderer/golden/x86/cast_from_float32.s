; fusegrad x86-64 kernel cast_from_float32
cast_from_float32:
     0: 53                             push rbx
     1: 4881ecd0000000                 sub rsp, 0xd0
     8: 48893c24                       mov qword ptr [rsp], rdi
     c: 4889742408                     mov qword ptr [rsp + 8], rsi
    11: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    16: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    1b: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    20: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    25: 488b3424                       mov rsi, qword ptr [rsp]
    29: bf00000000                     mov edi, 0
.Lloop1:
    2e: 4883ff30                       cmp rdi, 0x30
    32: 0f8d36010000                   jge .Lexit2
    38: c5fa1004be                     vmovss xmm0, dword ptr [rsi + rdi*4]
    3d: 4c8b442408                     mov r8, qword ptr [rsp + 8]
    42: c5f057c9                       vxorps xmm1, xmm1, xmm1
    46: c5f82ec1                       vucomiss xmm0, xmm1
    4a: 410f95c1                       setne r9b
    4e: 0f9ac3                         setp bl
    51: 4109d9                         or r9d, ebx
    54: 450fb6c9                       movzx r9d, r9b
    58: 45880c38                       mov byte ptr [r8 + rdi], r9b
    5c: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    61: c57a2cc8                       vcvttss2si r9d, xmm0
    65: 450fb6c9                       movzx r9d, r9b
    69: 45880c38                       mov byte ptr [r8 + rdi], r9b
    6d: 4c8b442418                     mov r8, qword ptr [rsp + 0x18]
    72: c57a2cc8                       vcvttss2si r9d, xmm0
    76: 450fb7c9                       movzx r9d, r9w
    7a: 6645890c78                     mov word ptr [r8 + rdi*2], r9w
    7f: 4c8b442420                     mov r8, qword ptr [rsp + 0x20]
    84: c461fa2cc8                     vcvttss2si r9, xmm0
    89: 4589c9                         mov r9d, r9d
    8c: 45890cb8                       mov dword ptr [r8 + rdi*4], r9d
    90: 4c8b442428                     mov r8, qword ptr [rsp + 0x28]
    95: c461fa2cc8                     vcvttss2si r9, xmm0
    9a: c5f82e05de000000               vucomiss xmm0, dword ptr [rip + .LC0]
    a2: 0f8228000000                   jb .Lf2u643
    a8: c5f82e05f0000000               vucomiss xmm0, dword ptr [rip + .LC1]
    b0: 0f831a000000                   jae .Lf2u643
    b6: c5fa5c0dc2000000               vsubss xmm1, xmm0, dword ptr [rip + .LC0]
    be: c461fa2cc9                     vcvttss2si r9, xmm1
    c3: 48bb0000000000000080           movabs rbx, 0x8000000000000000
    cd: 4931d9                         xor r9, rbx
.Lf2u643:
    d0: 4d890cf8                       mov qword ptr [r8 + rdi*8], r9
    d4: 4c8b8424e0000000               mov r8, qword ptr [rsp + 0xe0]
    dc: c57a2cc8                       vcvttss2si r9d, xmm0
    e0: 4d0fbec9                       movsx r9, r9b
    e4: 45880c38                       mov byte ptr [r8 + rdi], r9b
    e8: 4c8b8424e8000000               mov r8, qword ptr [rsp + 0xe8]
    f0: c57a2cc8                       vcvttss2si r9d, xmm0
    f4: 4d0fbfc9                       movsx r9, r9w
    f8: 6645890c78                     mov word ptr [r8 + rdi*2], r9w
    fd: 4c8b8424f0000000               mov r8, qword ptr [rsp + 0xf0]
   105: c57a2cc8                       vcvttss2si r9d, xmm0
   109: 4d63c9                         movsxd r9, r9d
   10c: 45890cb8                       mov dword ptr [r8 + rdi*4], r9d
   110: 4c8b8424f8000000               mov r8, qword ptr [rsp + 0xf8]
   118: c461fa2cc8                     vcvttss2si r9, xmm0
   11d: 4d890cf8                       mov qword ptr [r8 + rdi*8], r9
   121: 4c8b842400010000               mov r8, qword ptr [rsp + 0x100]
   129: c5f828c8                       vmovaps xmm1, xmm0
   12d: c4e3791dca00                   vcvtps2ph xmm2, xmm1, 0
   133: c4e27913ca                     vcvtph2ps xmm1, xmm2
   138: c4e3791dc900                   vcvtps2ph xmm1, xmm1, 0
   13e: c4c379150c7800                 vpextrw word ptr [r8 + rdi*2], xmm1, 0
   145: 4c8b842408010000               mov r8, qword ptr [rsp + 0x108]
   14d: c4c17a1104b8                   vmovss dword ptr [r8 + rdi*4], xmm0
   153: 4c8b842410010000               mov r8, qword ptr [rsp + 0x110]
   15b: c5fa5ac0                       vcvtss2sd xmm0, xmm0, xmm0
   15f: c4c17b1104f8                   vmovsd qword ptr [r8 + rdi*8], xmm0
   165: 4883c701                       add rdi, 1
   169: e9c0feffff                     jmp .Lloop1
.Lexit2:
   16e: c5f877                         vzeroupper
   171: 4881c4d0000000                 add rsp, 0xd0
   178: 5b                             pop rbx
   179: c3                             ret
   17a: cccccccccccc                   ; padding
.LC0:
   180: 0000005f0000005f0000005f0000005f0000005f0000005f0000005f0000005f ; f32 9.223372036854776e+18 / f64 4.0917397079468975e+149
.LC1:
   1a0: 0000805f0000805f0000805f0000805f0000805f0000805f0000805f0000805f ; f32 1.8446744073709552e+19 / f64 1.0474853671854986e+152
