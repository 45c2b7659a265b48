; fusegrad x86-64 kernel cast_from_float32
cast_from_float32:
     0: 53                             push rbx
     1: 4883ec30                       sub rsp, 0x30
     5: 48893c24                       mov qword ptr [rsp], rdi
     9: 4889742408                     mov qword ptr [rsp + 8], rsi
     e: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    13: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    18: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    1d: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    22: 488b3424                       mov rsi, qword ptr [rsp]
    26: bf00000000                     mov edi, 0
.Lloop1:
    2b: 4883ff30                       cmp rdi, 0x30
    2f: 0f8d00010000                   jge .Lexit2
    35: c5fa1004be                     vmovss xmm0, dword ptr [rsi + rdi*4]
    3a: 4c8b442408                     mov r8, qword ptr [rsp + 8]
    3f: c5f057c9                       vxorps xmm1, xmm1, xmm1
    43: c5f82ec1                       vucomiss xmm0, xmm1
    47: 410f95c1                       setne r9b
    4b: 0f9ac3                         setp bl
    4e: 4109d9                         or r9d, ebx
    51: 450fb6c9                       movzx r9d, r9b
    55: 45880c38                       mov byte ptr [r8 + rdi], r9b
    59: 4c8b442410                     mov r8, qword ptr [rsp + 0x10]
    5e: c57a2cc8                       vcvttss2si r9d, xmm0
    62: 450fb6c9                       movzx r9d, r9b
    66: 45880c38                       mov byte ptr [r8 + rdi], r9b
    6a: 4c8b442418                     mov r8, qword ptr [rsp + 0x18]
    6f: c57a2cc8                       vcvttss2si r9d, xmm0
    73: 450fb7c9                       movzx r9d, r9w
    77: 6645890c78                     mov word ptr [r8 + rdi*2], r9w
    7c: 4c8b442420                     mov r8, qword ptr [rsp + 0x20]
    81: c461fa2cc8                     vcvttss2si r9, xmm0
    86: 4589c9                         mov r9d, r9d
    89: 45890cb8                       mov dword ptr [r8 + rdi*4], r9d
    8d: 4c8b442428                     mov r8, qword ptr [rsp + 0x28]
    92: c461fa2cc8                     vcvttss2si r9, xmm0
    97: c5f82e05a1000000               vucomiss xmm0, dword ptr [rip + .LC0]
    9f: 0f8228000000                   jb .Lf2u643
    a5: c5f82e05b3000000               vucomiss xmm0, dword ptr [rip + .LC1]
    ad: 0f831a000000                   jae .Lf2u643
    b3: c5fa5c0d85000000               vsubss xmm1, xmm0, dword ptr [rip + .LC0]
    bb: c461fa2cc9                     vcvttss2si r9, xmm1
    c0: 48bb0000000000000080           movabs rbx, 0x8000000000000000
    ca: 4931d9                         xor r9, rbx
.Lf2u643:
    cd: 4d890cf8                       mov qword ptr [r8 + rdi*8], r9
    d1: 4c8b442440                     mov r8, qword ptr [rsp + 0x40]
    d6: c57a2cc8                       vcvttss2si r9d, xmm0
    da: 4d0fbec9                       movsx r9, r9b
    de: 45880c38                       mov byte ptr [r8 + rdi], r9b
    e2: 4c8b442448                     mov r8, qword ptr [rsp + 0x48]
    e7: c57a2cc8                       vcvttss2si r9d, xmm0
    eb: 4d0fbfc9                       movsx r9, r9w
    ef: 6645890c78                     mov word ptr [r8 + rdi*2], r9w
    f4: 4c8b442450                     mov r8, qword ptr [rsp + 0x50]
    f9: c57a2cc8                       vcvttss2si r9d, xmm0
    fd: 4d63c9                         movsxd r9, r9d
   100: 45890cb8                       mov dword ptr [r8 + rdi*4], r9d
   104: 4c8b442458                     mov r8, qword ptr [rsp + 0x58]
   109: c461fa2cc8                     vcvttss2si r9, xmm0
   10e: 4d890cf8                       mov qword ptr [r8 + rdi*8], r9
   112: 4c8b442460                     mov r8, qword ptr [rsp + 0x60]
   117: c4c17a1104b8                   vmovss dword ptr [r8 + rdi*4], xmm0
   11d: 4c8b442468                     mov r8, qword ptr [rsp + 0x68]
   122: c5fa5ac0                       vcvtss2sd xmm0, xmm0, xmm0
   126: c4c17b1104f8                   vmovsd qword ptr [r8 + rdi*8], xmm0
   12c: 4883c701                       add rdi, 1
   130: e9f6feffff                     jmp .Lloop1
.Lexit2:
   135: 4883c430                       add rsp, 0x30
   139: 5b                             pop rbx
   13a: c3                             ret
   13b: cccccccccc                     ; padding
.LC0:
   140: 0000005f0000005f0000005f0000005f0000005f0000005f0000005f0000005f ; f32 9.223372036854776e+18 / f64 4.0917397079468975e+149
.LC1:
   160: 0000805f0000805f0000805f0000805f0000805f0000805f0000805f0000805f ; f32 1.8446744073709552e+19 / f64 1.0474853671854986e+152
