; fusegrad x86-64 kernel cast_from_uint64
cast_from_uint64:
     0: 53                             push rbx
     1: 55                             push rbp
     2: 4883ec38                       sub rsp, 0x38
     6: 48893c24                       mov qword ptr [rsp], rdi
     a: 4889742408                     mov qword ptr [rsp + 8], rsi
     f: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    14: 48894c2418                     mov qword ptr [rsp + 0x18], rcx
    19: 4c89442420                     mov qword ptr [rsp + 0x20], r8
    1e: 4c894c2428                     mov qword ptr [rsp + 0x28], r9
    23: 488b3424                       mov rsi, qword ptr [rsp]
    27: bf00000000                     mov edi, 0
.Lloop1:
    2c: 4883ff19                       cmp rdi, 0x19
    30: 0f8d06010000                   jge .Lexit2
    36: 4c8b04fe                       mov r8, qword ptr [rsi + rdi*8]
    3a: 4c8b4c2408                     mov r9, qword ptr [rsp + 8]
    3f: 4983f800                       cmp r8, 0
    43: 0f95c3                         setne bl
    46: 0fb6db                         movzx ebx, bl
    49: 41881c39                       mov byte ptr [r9 + rdi], bl
    4d: 4c8b4c2410                     mov r9, qword ptr [rsp + 0x10]
    52: 4c89c3                         mov rbx, r8
    55: 0fb6db                         movzx ebx, bl
    58: 41881c39                       mov byte ptr [r9 + rdi], bl
    5c: 4c8b4c2418                     mov r9, qword ptr [rsp + 0x18]
    61: 4c89c3                         mov rbx, r8
    64: 0fb7db                         movzx ebx, bx
    67: 6641891c79                     mov word ptr [r9 + rdi*2], bx
    6c: 4c8b4c2420                     mov r9, qword ptr [rsp + 0x20]
    71: 4c89c3                         mov rbx, r8
    74: 89db                           mov ebx, ebx
    76: 41891cb9                       mov dword ptr [r9 + rdi*4], ebx
    7a: 4c8b4c2428                     mov r9, qword ptr [rsp + 0x28]
    7f: 4d8904f9                       mov qword ptr [r9 + rdi*8], r8
    83: 4c8b4c2450                     mov r9, qword ptr [rsp + 0x50]
    88: 4c89c3                         mov rbx, r8
    8b: 480fbedb                       movsx rbx, bl
    8f: 41881c39                       mov byte ptr [r9 + rdi], bl
    93: 4c8b4c2458                     mov r9, qword ptr [rsp + 0x58]
    98: 4c89c3                         mov rbx, r8
    9b: 480fbfdb                       movsx rbx, bx
    9f: 6641891c79                     mov word ptr [r9 + rdi*2], bx
    a4: 4c8b4c2460                     mov r9, qword ptr [rsp + 0x60]
    a9: 4c89c3                         mov rbx, r8
    ac: 4863db                         movsxd rbx, ebx
    af: 41891cb9                       mov dword ptr [r9 + rdi*4], ebx
    b3: 4c8b4c2468                     mov r9, qword ptr [rsp + 0x68]
    b8: 4c89c3                         mov rbx, r8
    bb: 49891cf9                       mov qword ptr [r9 + rdi*8], rbx
    bf: 4c8b4c2470                     mov r9, qword ptr [rsp + 0x70]
    c4: 4d85c0                         test r8, r8
    c7: 0f880a000000                   js .Lu64big3
    cd: c4c1fb2ac0                     vcvtsi2sd xmm0, xmm0, r8
    d2: e91a000000                     jmp .Lu64done4
.Lu64big3:
    d7: 4c89c3                         mov rbx, r8
    da: 48c1eb01                       shr rbx, 1
    de: 4c89c5                         mov rbp, r8
    e1: 4883e501                       and rbp, 1
    e5: 4809eb                         or rbx, rbp
    e8: c4e1fb2ac3                     vcvtsi2sd xmm0, xmm0, rbx
    ed: c5fb58c0                       vaddsd xmm0, xmm0, xmm0
.Lu64done4:
    f1: c5fb5ac0                       vcvtsd2ss xmm0, xmm0, xmm0
    f5: c4c17a1104b9                   vmovss dword ptr [r9 + rdi*4], xmm0
    fb: 4c8b4c2478                     mov r9, qword ptr [rsp + 0x78]
   100: 4d85c0                         test r8, r8
   103: 0f880a000000                   js .Lu64big5
   109: c4c1fb2ac0                     vcvtsi2sd xmm0, xmm0, r8
   10e: e91a000000                     jmp .Lu64done6
.Lu64big5:
   113: 4c89c3                         mov rbx, r8
   116: 48c1eb01                       shr rbx, 1
   11a: 4d89c0                         mov r8, r8
   11d: 4983e001                       and r8, 1
   121: 4c09c3                         or rbx, r8
   124: c4e1fb2ac3                     vcvtsi2sd xmm0, xmm0, rbx
   129: c5fb58c0                       vaddsd xmm0, xmm0, xmm0
.Lu64done6:
   12d: c4c17b1104f9                   vmovsd qword ptr [r9 + rdi*8], xmm0
   133: 4883c701                       add rdi, 1
   137: e9f0feffff                     jmp .Lloop1
.Lexit2:
   13c: 4883c438                       add rsp, 0x38
   140: 5d                             pop rbp
   141: 5b                             pop rbx
   142: c3                             ret
