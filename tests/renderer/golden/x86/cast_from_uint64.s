; fusegrad x86-64 kernel cast_from_uint64
cast_from_uint64:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4881ecd8000000                 sub rsp, 0xd8
     9: 48893c24                       mov qword ptr [rsp], rdi
     d: 4889742408                     mov qword ptr [rsp + 8], rsi
    12: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    17: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    1c: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    21: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    26: 488b3424                       mov rsi, qword ptr [rsp]
    2a: bf00000000                     mov edi, 0
.Lloop1:
    2f: 4883ff19                       cmp rdi, 0x19
    33: 0f8d66010000                   jge .Lexit2
    39: 4c8b04fe                       mov r8, qword ptr [rsi + rdi*8]
    3d: 4c8b4c2408                     mov r9, qword ptr [rsp + 8]
    42: 4983f800                       cmp r8, 0
    46: 0f95c3                         setne bl
    49: 0fb6db                         movzx ebx, bl
    4c: 41881c39                       mov byte ptr [r9 + rdi], bl
    50: 4c8b4c2410                     mov r9, qword ptr [rsp + 0x10]
    55: 4c89c3                         mov rbx, r8
    58: 0fb6db                         movzx ebx, bl
    5b: 41881c39                       mov byte ptr [r9 + rdi], bl
    5f: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    64: 4c89c3                         mov rbx, r8
    67: 0fb7db                         movzx ebx, bx
    6a: 6641891c79                     mov word ptr [r9 + rdi*2], bx
    6f: 4c8b4c2420                     mov r9, qword ptr [rsp + 0x20]
    74: 4c89c3                         mov rbx, r8
    77: 89db                           mov ebx, ebx
    79: 41891cb9                       mov dword ptr [r9 + rdi*4], ebx
    7d: 4c8b4c2428                     mov r9, qword ptr [rsp + 0x28]
    82: 4d8904f9                       mov qword ptr [r9 + rdi*8], r8
    86: 4c8b8c24f0000000               mov r9, qword ptr [rsp + 0xf0]
    8e: 4c89c3                         mov rbx, r8
    91: 480fbedb                       movsx rbx, bl
    95: 41881c39                       mov byte ptr [r9 + rdi], bl
    99: 4c8b8c24f8000000               mov r9, qword ptr [rsp + 0xf8]
    a1: 4c89c3                         mov rbx, r8
    a4: 480fbfdb                       movsx rbx, bx
    a8: 6641891c79                     mov word ptr [r9 + rdi*2], bx
    ad: 4c8b8c2400010000               mov r9, qword ptr [rsp + 0x100]
    b5: 4c89c3                         mov rbx, r8
    b8: 4863db                         movsxd rbx, ebx
    bb: 41891cb9                       mov dword ptr [r9 + rdi*4], ebx
    bf: 4c8b8c2408010000               mov r9, qword ptr [rsp + 0x108]
    c7: 4c89c3                         mov rbx, r8
    ca: 49891cf9                       mov qword ptr [r9 + rdi*8], rbx
    ce: 4c8b8c2410010000               mov r9, qword ptr [rsp + 0x110]
    d6: 4d85c0                         test r8, r8
    d9: 0f880a000000                   js .Lu64big3
    df: c4c1fb2ac0                     vcvtsi2sd xmm0, xmm0, r8
    e4: e91a000000                     jmp .Lu64done4
.Lu64big3:
    e9: 4c89c3                         mov rbx, r8
    ec: 48c1eb01                       shr rbx, 1
    f0: 4c89c5                         mov rbp, r8
    f3: 4883e501                       and rbp, 1
    f7: 4809eb                         or rbx, rbp
    fa: c4e1fb2ac3                     vcvtsi2sd xmm0, xmm0, rbx
    ff: c5fb58c0                       vaddsd xmm0, xmm0, xmm0
.Lu64done4:
   103: c5fb5ac0                       vcvtsd2ss xmm0, xmm0, xmm0
   107: c4e3791dc100                   vcvtps2ph xmm1, xmm0, 0
   10d: c4e27913c1                     vcvtph2ps xmm0, xmm1
   112: c4e3791dc000                   vcvtps2ph xmm0, xmm0, 0
   118: c4c37915047900                 vpextrw word ptr [r9 + rdi*2], xmm0, 0
   11f: 4c8b8c2418010000               mov r9, qword ptr [rsp + 0x118]
   127: 4d85c0                         test r8, r8
   12a: 0f880a000000                   js .Lu64big5
   130: c4c1fb2ac0                     vcvtsi2sd xmm0, xmm0, r8
   135: e91a000000                     jmp .Lu64done6
.Lu64big5:
   13a: 4c89c3                         mov rbx, r8
   13d: 48c1eb01                       shr rbx, 1
   141: 4c89c5                         mov rbp, r8
   144: 4883e501                       and rbp, 1
   148: 4809eb                         or rbx, rbp
   14b: c4e1fb2ac3                     vcvtsi2sd xmm0, xmm0, rbx
   150: c5fb58c0                       vaddsd xmm0, xmm0, xmm0
.Lu64done6:
   154: c5fb5ac0                       vcvtsd2ss xmm0, xmm0, xmm0
   158: c4c17a1104b9                   vmovss dword ptr [r9 + rdi*4], xmm0
   15e: 4c8b8c2420010000               mov r9, qword ptr [rsp + 0x120]
   166: 4d85c0                         test r8, r8
   169: 0f880a000000                   js .Lu64big7
   16f: c4c1fb2ac0                     vcvtsi2sd xmm0, xmm0, r8
   174: e917000000                     jmp .Lu64done8
.Lu64big7:
   179: 4c89c3                         mov rbx, r8
   17c: 48c1eb01                       shr rbx, 1
   180: 4983e001                       and r8, 1
   184: 4c09c3                         or rbx, r8
   187: c4e1fb2ac3                     vcvtsi2sd xmm0, xmm0, rbx
   18c: c5fb58c0                       vaddsd xmm0, xmm0, xmm0
.Lu64done8:
   190: c4c17b1104f9                   vmovsd qword ptr [r9 + rdi*8], xmm0
   196: 4883c701                       add rdi, 1
   19a: e990feffff                     jmp .Lloop1
.Lexit2:
   19f: c5f877                         vzeroupper
   1a2: 4881c4d8000000                 add rsp, 0xd8
   1a9: 5d                             pop rbp
   1aa: 5b                             pop rbx
   1ab: c3                             ret
