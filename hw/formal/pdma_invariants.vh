// The invariants of pdma's registers (included inside hw/rtl/pdma.v under `ifdef FORMAL): the
// property monitor pdma_props (hw/formal/pdma.sv) watches the unit's ports, and these assertions
// tie its state to the unit's registers and to the entry buffer's words (rowmem's f_words), so
// that k-induction cannot start from a state that no run reaches (a stall freezes both, so
// without them an unreachable one could last any k cycles).

wire        f_past_valid, f_busy, f_copy, f_bad, f_faulted, f_fence;
wire [1:0]  f_cmds;
wire [16:0] f_owed;
wire [31:0] f_twords, f_first;

pdma_props #(
    .SRAM_AW (SRAM_AW)
) f_props (
    .clk (clk), .rst (rst), .stall (stall), .cmd_pload (cmd_pload), .cmd_pstore (cmd_pstore),
    .cmd_pcopy (cmd_pcopy), .cmd_table (cmd_table), .cmd_sram (cmd_sram), .cmd_pool (cmd_pool),
    .cmd_row_words (cmd_row_words), .cmd_len (cmd_len), .cmd_page_shift (cmd_page_shift),
    .cmd_row (cmd_row), .cmd_pages (cmd_pages), .cmd_page_rows (cmd_page_rows),
    .cmd_words (cmd_words), .cmd_first_entry (cmd_first_entry), .cmd_entries (cmd_entries),
    .done (done), .fault (fault), .table_word (table_word), .data_word (data_word),
    .mem_addr (mem_addr), .mem_len (mem_len), .rd_cmd (rd_cmd), .rd_valid (rd_valid),
    .rd_data (rd_data), .wr_cmd (wr_cmd), .wr_push (wr_push), .wr_data (wr_data),
    .fence (fence), .fence_done (fence_done), .sram_raddr (sram_raddr),
    .sram_rdata (sram_rdata), .sram_we (sram_we), .sram_waddr (sram_waddr),
    .sram_wdata (sram_wdata),
    .f_past_valid (f_past_valid), .f_busy (f_busy), .f_copy (f_copy), .f_cmds (f_cmds),
    .f_owed (f_owed), .f_twords (f_twords), .f_first (f_first), .f_bad (f_bad),
    .f_faulted (f_faulted), .f_fence (f_fence)
);

wire        f_in_table = (state_reg == S_HEADER) || (state_reg == S_ENTRIES)
                         || (state_reg == S_TABLE);
wire        f_in_data  = (state_reg == S_LOAD) || (state_reg == S_STORE)
                         || (state_reg == S_FENCE);
wire [47:0] f_rw       = {40'd0, cmd_row_words};
// the data side's position: row drow_reg, column dcol_reg, dcount_reg words stepped (no wrap)
wire [47:0] f_stepped  = {16'd0, drow_reg} * f_rw + {40'd0, dcol_reg};
wire        f_place_ok = (f_stepped == {16'd0, dcount_reg}) && (dcol_reg < cmd_row_words)
                         && (dcount_reg <= n_32);
// LOAD: the words of the rows commanded (a row's stream goes with its first word)
wire [47:0] f_ld_asked = ({16'd0, drow_reg} + {47'd0, dcol_reg != 8'd0}) * f_rw;
// the words commanded so far in the table states: the header, then the E entries
wire [31:0] f_tb_asked = (state_reg == S_HEADER) ? 32'd0
                         : (state_reg == S_ENTRIES) ? 32'd1 : cmd_entries + 32'd1;

// every entry arrived and used holds a page inside the pool, unless the verdict is BAD_PAGE
reg     f_entries_ok;
integer f_e;
always @(*) begin
    f_entries_ok = 1'b1;
    for (f_e = 0; f_e < `PT_ENTRIES; f_e = f_e + 1)
        if (f_e + 1 < trsp_reg && f_e >= used_lo && f_e <= used_hi
            && f_entry_words[16*f_e +: 16] >= cmd_pages)
            f_entries_ok = 1'b0;
end

always @(*) begin
    if (f_past_valid && !rst) begin
        // the state register holds one of the seven states; an instruction runs exactly while
        // the unit is out of IDLE, as the one it was commanded
        I_STATE: assert (state_reg <= S_FENCE);
        I_BUSY: assert (f_busy == (state_reg != S_IDLE));
        I_OP: assert (!f_busy || ((pload || pstore || copy) && f_copy == copy));
        // the table streams: the header's in HEADER, the entries' in ENTRIES, then none
        I_CMDS: assert (!f_busy || f_cmds == ((state_reg == S_HEADER) ? 2'd0
                                              : (state_reg == S_ENTRIES) ? 2'd1 : 2'd2));
        // the table words counted and judged alike; in the table states fewer than E + 1 have
        // come, and the rest are owed; after them all have, and none was bad
        I_TWORDS: assert (!f_busy || (f_twords == trsp_reg && f_bad == bad_reg));
        I_TABLE: assert (!f_in_table || (trsp_reg <= cmd_entries
                                         && {15'd0, f_owed} + trsp_reg == f_tb_asked));
        // the data side starts from its first word after the table
        I_DATA_START: assert (!f_in_table || (drow_reg == 32'd0 && dcol_reg == 8'd0
                                              && dcount_reg == 32'd0 && lrsp_reg == 32'd0
                                              && sread_reg == 32'd0));
        I_AFTER_TABLE: assert (!f_in_data || (trsp_reg == cmd_entries + 32'd1 && !bad_reg));
        // the header the unit keeps is the monitor's (a wider one is bad)
        I_FIRST: assert (!(f_busy && trsp_reg != 32'd0)
                         || (f_first[15:0] == first_reg && (bad_reg || f_first[31:16] == 16'd0)));
        // the words checked: PCOPY's pair; PLOAD's and PSTORE's header and the entries
        // in the buffer
        I_PAGES: assert (!((f_in_table || f_in_data) && !bad_reg)
                         || (copy ? ((trsp_reg == 32'd0 || first_reg < cmd_pages)
                                     && (trsp_reg <= 32'd1 || dst_reg < cmd_pages))
                                  : ((trsp_reg == 32'd0 || {16'd0, first_reg} <= mask)
                                     && f_entries_ok)));
        // LOAD (PLOAD, PCOPY's first half): the words asked are owed or arrived, fewer than n
        I_LOAD: assert (state_reg != S_LOAD || (!pstore && f_place_ok && lrsp_reg < n_32
                                                && sread_reg == 32'd0 && !pend_reg
                                                && {31'd0, f_owed} + {16'd0, lrsp_reg}
                                                   == f_ld_asked
                                                && f_ld_asked <= {16'd0, n_32}));
        // STORE (PSTORE, PCOPY's second half): one SRAM read ahead of the pushes at most
        I_STORE: assert (state_reg != S_STORE || (!pload && f_place_ok
                                                  && sread_reg == dcount_reg
                                                                  + {31'd0, pend_reg}
                                                  && sread_reg <= n_32));
        // nothing owed outside the table and LOAD; a fence owed exactly in FENCE
        I_NOT_OWED: assert (f_in_table || state_reg == S_LOAD || f_owed == 17'd0);
        I_FENCE: assert (f_fence == (state_reg == S_FENCE));
        // after BAD_PAGE the unit is idle
        I_FAULTED: assert (!f_faulted || state_reg == S_IDLE);
    end
end
