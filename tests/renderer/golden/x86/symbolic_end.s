; fusegrad x86-64 kernel symbolic_end
symbolic_end:
     0: 53                             push rbx
     1: 4881ecc0000000                 sub rsp, 0xc0
     8: 48893c24                       mov qword ptr [rsp], rdi
     c: 4889742408                     mov qword ptr [rsp + 8], rsi
    11: 4889542410                     mov qword ptr [rsp + 0x10], rdx
    16: 488b3424                       mov rsi, qword ptr [rsp]
    1a: 488b7c2408                     mov rdi, qword ptr [rsp + 8]
    1f: 4c63442410                     movsxd r8, dword ptr [rsp + 0x10]
    24: 41b900000000                   mov r9d, 0
.Lloop1:
    2a: 4d39c1                         cmp r9, r8
    2d: 0f8d17000000                   jge .Lexit2
    33: 4a631c8e                       movsxd rbx, dword ptr [rsi + r9*4]
    37: 4401c3                         add ebx, r8d
    3a: 4863db                         movsxd rbx, ebx
    3d: 42891c8f                       mov dword ptr [rdi + r9*4], ebx
    41: 4983c101                       add r9, 1
    45: e9e0ffffff                     jmp .Lloop1
.Lexit2:
    4a: c5f877                         vzeroupper
    4d: 4881c4c0000000                 add rsp, 0xc0
    54: 5b                             pop rbx
    55: c3                             ret
